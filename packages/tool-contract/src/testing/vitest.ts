/**
 * @aptix/tool-contract/testing/vitest: the contract kit as a vitest suite. Everything exported here is
 * public API. This entry imports vitest (an optional peer dependency); `./testing` does not.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, toPlainJson } from '../schema.js';
import { CONTRACT_CHECK_OF, type ContractCheck } from './codes.js';
import { schemasInFreshProcess, type ProcessSchemaEntry, type ProcessSchemas } from './process-schemas.js';
import { checkSchemaSnapshot } from './schema-snapshot.js';
import { verifyToolContract, type ToolContractReport, type VerifyToolContractOptions } from './verify-tool-contract.js';
import { fileURLToPath } from 'node:url';

export interface DescribeToolContractOptions extends Omit<VerifyToolContractOptions, 'otherProcessSchemas'> {
  /** The committed schema snapshot to compare with (a path or a file URL); no snapshot test without it. */
  readonly snapshot?: string | URL;
  /** The package name, for the snapshot's messages. */
  readonly packageName?: string;
  /** The title of the suite. Default `tool contract`. */
  readonly title?: string;
}

const CHECKS: ReadonlyArray<readonly [ContractCheck, string]> = [
  ['rules', 'follows the registry rules (name, usage guide, execute, schema, time-out)'],
  ['descriptions', 'describes every parameter, nested ones too'],
  ['strict', 'is accepted by OpenAI strict mode, or declares strict: false'],
  ['garbage', 'answers garbage arguments with well-formed failed InvokeResults, never a throw'],
  ['cancellation', 'settles soon after its call is cancelled, when it takes the AbortSignal'],
  ['prototypes', 'leaves every built-in prototype untouched'],
];
/** Checks that only ever warn; their warnings are printed with those of `rules`. */
const WARNING_ONLY: ReadonlySet<ContractCheck> = new Set(['usage']);

/**
 * Runs the contract kit over `tools` as a vitest suite: one `describe` per tool and one test per check,
 * each failing with the full messages of its violations. Warnings (usage-metadata sections, for one)
 * are printed, never failed.
 *
 * @example
 * // src/index.test.ts
 * describeToolContract(tools, {
 *   dependencies: { weatherClient: new FakeWeatherClient() },
 *   snapshot: new URL('../tool-schemas.json', import.meta.url),
 *   modulePath: fileURLToPath(new URL('./index.ts', import.meta.url)),
 * });
 */
export function describeToolContract(tools: readonly unknown[], options: DescribeToolContractOptions = {}): void {
  const { snapshot, packageName, title, ...verifyOptions } = options;
  describe(title ?? 'tool contract', () => {
    let reads: Promise<ProcessSchemas[]> | undefined;
    if (options.modulePath !== undefined) {
      const modulePath = options.modulePath;
      const read = () =>
        schemasInFreshProcess(modulePath, { exportName: options.exportName, nodeArguments: options.nodeArguments });
      beforeAll(() => {
        reads = Promise.all([read(), read()]);
        reads.catch(() => undefined);
      });
    }

    for (const [index, toolClass] of tools.entries()) {
      const name =
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
        typeof (toolClass as { ToolName?: unknown })?.ToolName === 'string'
          ? (toolClass as { ToolName: string }).ToolName
          : `tools[${index}]`;
      describe(name, () => {
        let report: ToolContractReport;
        beforeAll(async () => {
          let otherProcessSchemas: ProcessSchemaEntry[] | undefined;
          if (reads !== undefined) {
            try {
              const className = typeof toolClass === 'function' ? toolClass.name : '';
              otherProcessSchemas = (await reads).map(
                (read) =>
                  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
                  read.exports[className] ??
                  read.tools.find((entry) => entry.toolName === name) ?? {
                    error: `${options.modulePath} does not export this tool`,
                  },
              );
            } catch (error) {
              otherProcessSchemas = [{ error: error instanceof Error ? error.message : String(error) }];
            }
          }
          report = await verifyToolContract(toolClass, { ...verifyOptions, otherProcessSchemas });
        }, 120_000);

        for (const [check, title] of CHECKS) {
          it(title, () => {
            const shown = report.warnings.filter(
              (finding) =>
                CONTRACT_CHECK_OF[finding.code] === check ||
                (check === 'rules' && WARNING_ONLY.has(CONTRACT_CHECK_OF[finding.code])),
            );
            for (const warning of shown) console.warn(`${report.tool}: ${warning.code}: ${warning.message}`);
            expect(messagesOf(report, check)).toEqual([]);
          });
        }
        if (options.modulePath !== undefined) {
          it('has the same canonical schema in two separate Node processes', () => {
            expect(messagesOf(report, 'processes')).toEqual([]);
          });
        }
      });
    }

    if (snapshot !== undefined) {
      it('matches the committed schema snapshot', () => {
        const file = snapshot instanceof URL ? fileURLToPath(snapshot) : snapshot;
        const schemas: Record<string, string> = {};
        for (const toolClass of tools as ReadonlyArray<{ ToolName: string; getSchema(): unknown }>)
          schemas[toolClass.ToolName] = canonicalJson(toPlainJson(toolClass.getSchema()));
        const result = checkSchemaSnapshot({ file, schemas, packageName: packageName ?? 'this package' });
        expect(result.violations.map((violation) => violation.message)).toEqual([]);
      });
    }
  });
}

function messagesOf(report: ToolContractReport, check: ContractCheck): string[] {
  return report.violations
    .filter((finding) => CONTRACT_CHECK_OF[finding.code] === check)
    .map((finding) => `${finding.code}: ${finding.message}`);
}
