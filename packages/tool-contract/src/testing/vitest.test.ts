import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type, type Static } from 'typebox';
import { afterAll } from 'vitest';
import type { ToolDependencies } from '../agent-tool.js';
import { canonicalJson, functionToolSchema } from '../schema.js';
import { TypedAgentTool } from '../typed-agent-tool.js';
import { usage } from '../usage.js';
import { schemaSnapshotText } from './schema-snapshot.js';
import { describeToolContract } from './vitest.js';

const Args = Type.Object(
  { text: Type.String({ minLength: 1, description: 'Text to stamp.' }) },
  { additionalProperties: false },
);

class Stamp {
  readonly prefix = '#';
}

/** A tool that needs a Stamp, which no stand-in can replace: the suite must build it with `createTool`. */
class StampTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'kit_stamp';
  static readonly ToolUsageMetadata = usage`
    kit_stamp — Usage Guide

    Primary purpose:
    - Stamp a text.

    Rules:
    - Tests only.

    Arguments:
    - text (required): the text to stamp.

    Error codes:
    - INVALID_ARGUMENTS: text is missing or empty.

    Good usage:
    - { "text": "a" }

    Bad usage:
    - {}
  `;
  static getSchema() {
    return functionToolSchema(StampTool.ToolName, 'Stamps a text.', Args);
  }
  readonly #stamp: Stamp;
  constructor(deps: ToolDependencies & { stamp: Stamp }) {
    super(Args, deps.logger);
    if (!(deps.stamp instanceof Stamp)) throw new TypeError('StampTool requires a Stamp.');
    this.#stamp = deps.stamp;
  }
  protected run({ text }: Static<typeof Args>) {
    return { stamped: `${this.#stamp.prefix}${text}` };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'aptix-vitest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const snapshot = join(dir, 'tool-schemas.json');
writeFileSync(snapshot, schemaSnapshotText({ kit_stamp: canonicalJson(StampTool.getSchema()) }));

describeToolContract([StampTool], {
  title: 'describeToolContract over a tool that keeps the contract',
  createTool: (toolClass, dependencies) => new toolClass({ ...dependencies, stamp: new Stamp() }),
  snapshot,
  packageName: '@aptix/kit-tests',
});
