import { join } from 'node:path';
import { ToolContractError } from '../errors.js';
import { PromptRegistry, ResourceRegistry } from '../unit-registry.js';
import type { ContractFinding } from './codes.js';
import { checkSchemaSnapshot, type SchemaSnapshotResult } from './schema-snapshot.js';

/** The file, beside `tool-schemas.json`, holding the committed snapshot of a package's prompts and resources. */
export const UNIT_SNAPSHOT_FILE = 'unit-schemas.json';

/** What the kit found of a package's prompts and resources. */
export interface PackageUnitsReport {
  readonly prompts: readonly string[];
  readonly resources: readonly string[];
  readonly violations: readonly ContractFinding[];
  readonly warnings: readonly ContractFinding[];
  /** The comparison with `unit-schemas.json`; undefined for a package without prompts or resources. */
  readonly snapshot: SchemaSnapshotResult | undefined;
}

/**
 * Checks the `prompts` and `resources` a package's entry exports, as a host checks them when it loads
 * the package (every rule of `inspectPrompt` and `inspectResource`, duplicates), and compares what
 * clients see of them with the committed `unit-schemas.json` (written with `update`). A package
 * without either export is not touched: no file is asked for.
 */
export function verifyPackageUnits(
  module: Record<string, unknown>,
  packageName: string,
  packageDir: string,
  options: { readonly update?: boolean; readonly updateCommand?: string } = {},
): PackageUnitsReport {
  const violations: ContractFinding[] = [];
  const warnings: ContractFinding[] = [];
  const schemas: Record<string, string> = {};
  const names = { prompt: [] as string[], resource: [] as string[] };
  let incomplete = false;
  let declared = false;
  for (const kind of ['prompt', 'resource'] as const) {
    const exported = module[`${kind}s`];
    if (exported === undefined) continue;
    declared = true;
    if (!Array.isArray(exported)) {
      violations.push({
        code: kind === 'prompt' ? 'NOT_A_PROMPT' : 'NOT_A_RESOURCE',
        message: `${packageName} exports \`${kind}s\` but it is not an array. Fix: export const ${kind}s = [...] as const satisfies ${kind === 'prompt' ? 'PromptList' : 'ResourceList'};`,
      });
      incomplete = true;
      continue;
    }
    const registry = kind === 'prompt' ? new PromptRegistry() : new ResourceRegistry();
    for (const candidate of exported) {
      try {
        const unit = registry.register(candidate);
        names[kind].push(unit.name);
        schemas[`${kind}:${unit.name}`] = unit.canonicalSchema;
      } catch (error) {
        incomplete = true;
        if (!(error instanceof ToolContractError)) throw error;
        for (const violation of error.violations)
          violations.push({ code: violation.code, message: `${packageName}: ${violation.message}` });
      }
    }
  }
  const snapshot = declared
    ? checkSchemaSnapshot({
        file: join(packageDir, UNIT_SNAPSHOT_FILE),
        schemas,
        packageName,
        incomplete,
        ...(options.update === undefined ? {} : { update: options.update }),
        ...(options.updateCommand === undefined ? {} : { updateCommand: options.updateCommand }),
      })
    : undefined;
  if (snapshot !== undefined) {
    violations.push(...snapshot.violations);
    warnings.push(...snapshot.warnings);
  }
  return { prompts: names.prompt, resources: names.resource, violations, warnings, snapshot };
}
