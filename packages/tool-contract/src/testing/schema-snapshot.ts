import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { canonicalJson } from '../schema.js';
import { ContractCheckCode, type ContractFinding } from './codes.js';
import { jsonDifferences } from './schema-diff.js';

/** The file, at a tool package's root, that holds its committed schema snapshot. */
export const SCHEMA_SNAPSHOT_FILE = 'tool-schemas.json';

/** The command that rewrites the snapshot, run in the package's folder: works in any project, with or without Nx. */
export const DEFAULT_UPDATE_COMMAND = 'npx aptix-contract --update';

/**
 * The snapshot text of canonical schemas by tool name: keys sorted at every level, two-space
 * indentation and a final newline, so a schema change shows as a small, reviewable diff.
 *
 * @example writeFileSync('tool-schemas.json', schemaSnapshotText({ agent_hello_world: canonicalJson(HelloWorldTool.getSchema()) }));
 */
export function schemaSnapshotText(schemas: Readonly<Record<string, string>>): string {
  const byName = Object.fromEntries(
    Object.entries(schemas).map(([name, schema]) => [name, JSON.parse(schema) as unknown]),
  );
  return `${JSON.stringify(JSON.parse(canonicalJson(byName)), null, 2)}\n`;
}

export interface SchemaSnapshotOptions {
  /** The snapshot file. */
  readonly file: string;
  /** Canonical schema JSON by tool name, as the tools give them now. */
  readonly schemas: Readonly<Record<string, string>>;
  /** The package the snapshot belongs to, for messages and the changeset check. */
  readonly packageName: string;
  /** Write the snapshot instead of comparing. */
  readonly update?: boolean;
  /** Some tools' schemas could not be read: do not report their absence, and refuse to update. */
  readonly incomplete?: boolean;
  /** The command that updates the snapshot, for messages. Default `npx aptix-contract --update` (the Nx target passes its own). */
  readonly updateCommand?: string;
}

export interface SchemaSnapshotResult {
  readonly status: 'up-to-date' | 'written' | 'differs' | 'missing' | 'not-updated';
  /** Tools whose schema changed, appeared or disappeared. */
  readonly changed: readonly string[];
  readonly violations: readonly ContractFinding[];
  readonly warnings: readonly ContractFinding[];
}

/**
 * Compares a package's tool schemas with its committed snapshot, or writes the snapshot (`update`).
 * A difference is a violation whose message says why it matters: a schema is an API, for every model
 * that calls the tool, so a change needs a changeset; and how to accept it.
 */
export function checkSchemaSnapshot(options: SchemaSnapshotOptions): SchemaSnapshotResult {
  const { file, schemas, packageName, incomplete = false } = options;
  const update = options.updateCommand ?? DEFAULT_UPDATE_COMMAND;
  const text = schemaSnapshotText(schemas);
  const violations: ContractFinding[] = [];
  const warnings: ContractFinding[] = [];
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  let committed: Record<string, unknown> | undefined;
  if (existing !== undefined) {
    try {
      committed = JSON.parse(existing) as Record<string, unknown>;
    } catch {
      committed = {};
    }
  }
  const changed = committed === undefined ? Object.keys(schemas).sort() : changedTools(committed, schemas, incomplete);

  if (options.update) {
    if (incomplete) {
      violations.push({
        code: ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH,
        message: `${packageName}: the schema snapshot was not updated because some tools' schemas could not be read. Fix the violations above first.`,
      });
      return { status: 'not-updated', changed, violations, warnings };
    }
    if (existing === text) return { status: 'up-to-date', changed: [], violations, warnings };
    writeFileSync(file, text);
    // A first snapshot records what was already published; only a change to a committed one is an API change.
    if (existing !== undefined && changed.length > 0 && changesetMentions(dirname(file), packageName) === false) {
      warnings.push({
        code: ContractCheckCode.CHANGESET_MISSING,
        message:
          `${packageName}: the schema snapshot changed (${changed.join(', ') || 'formatting'}) and ` +
          `no changeset mentions ${packageName}. A schema change is an API change for every model ` +
          `using the tool. Fix: run npx changeset and say what changed for models.`,
      });
    }
    return { status: 'written', changed, violations, warnings };
  }

  if (committed === undefined) {
    violations.push({
      code: ContractCheckCode.SCHEMA_SNAPSHOT_MISSING,
      message:
        `${packageName} has no schema snapshot (${shown(file)}). Every tool package commits the ` +
        `canonical schemas of its tools, so a schema change cannot slip through unreviewed. Fix: ` +
        `run ${update} and commit the file.`,
    });
    return { status: 'missing', changed, violations, warnings };
  }
  for (const name of changed) {
    const before = committed[name];
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
    const after = schemas[name] === undefined ? undefined : (JSON.parse(schemas[name]) as unknown);
    const what =
      before === undefined
        ? 'is new: it is not in the snapshot'
        : after === undefined
          ? 'is in the snapshot but no longer exported'
          : `differs from the snapshot (${jsonDifferences(before, after).join('; ')})`;
    violations.push({
      code: ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH,
      message:
        `The schema of ${name} ${what}. A schema change is an API change for every model using the ` +
        `tool: prompts, cached tool lists and models tuned on the old schema call it the old way. ` +
        `It needs a changeset (npx changeset: a major bump for ${packageName} when calls valid ` +
        `before are now refused or mean something else, minor otherwise). If the change is ` +
        `intended: run ${update}, then commit ${SCHEMA_SNAPSHOT_FILE} with the changeset.`,
    });
  }
  if (changed.length === 0 && existing !== text && !incomplete) {
    violations.push({
      code: ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH,
      message: `${shown(file)} holds the right schemas but not in canonical form (sorted keys, two-space indentation). Fix: run ${update}.`,
    });
  }
  return { status: violations.length > 0 ? 'differs' : 'up-to-date', changed, violations, warnings };
}

function shown(file: string): string {
  return relative(process.cwd(), file) || file;
}

function changedTools(
  committed: Readonly<Record<string, unknown>>,
  schemas: Readonly<Record<string, string>>,
  incomplete: boolean,
): string[] {
  const names = new Set([...Object.keys(schemas), ...(incomplete ? [] : Object.keys(committed))]);
  return [...names]
    .filter(
      (name) =>
        committed[name] === undefined ||
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- an index or key that is not there reads undefined, which the type (no noUncheckedIndexedAccess) leaves out
        schemas[name] === undefined ||
        canonicalJson(committed[name]) !== schemas[name],
    )
    .sort();
}

/**
 * Whether a pending changeset names `packageName` in its front matter: `undefined` when no `.changeset`
 * folder is found above `fromDir` (changesets are not used there).
 */
export function changesetMentions(fromDir: string, packageName: string): boolean | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const folder = join(dir, '.changeset');
    if (existsSync(join(folder, 'config.json'))) {
      const pattern = new RegExp(`^\\s*["']?${packageName.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}["']?\\s*:`, 'm');
      return readdirSync(folder).some(
        (name) =>
          name.endsWith('.md') &&
          name !== 'README.md' &&
          pattern.test(frontMatter(readFileSync(join(folder, name), 'utf8'))),
      );
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function frontMatter(text: string): string {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  return match?.[1] ?? '';
}
