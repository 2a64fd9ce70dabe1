import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { Ajv } from 'ajv';
import type * as Ajv2020Module from 'ajv/dist/2020.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';
import { MCP_HEADER_KEYWORD } from './mcp-header.js';

/**
 * ajv and ajv-formats are loaded on first use, not when the contract is imported: a tool author's
 * `import { TypedAgentTool } from '@aptix/tool-contract'` pays for them only once a schema is checked
 * (about three fifths of the package's cold import time).
 */
const load = createRequire(import.meta.url);
const addFormats = (ajv: Ajv): void => void (load('ajv-formats') as typeof addFormatsModule).default(ajv);

/** The `$schema` of JSON Schema 2020-12, the dialect MCP's 2025-11-25 revision names as the default. */
export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

// strictRequired is off because the contract checks `required` itself (findStrictSchemaProblems), and
// allows what ajv's check refuses: a `required` in a branch (`anyOf`, `then`…) naming a property the
// enclosing object declares, as 2020-12 schemas commonly do.
const OPTIONS = {
  allErrors: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  coerceTypes: false,
  useDefaults: false,
  messages: true,
} as const;
let instance: Ajv | undefined;
let instance2020: Ajv2020 | undefined;

/**
 * The one ajv instance of this package for draft-07 schemas (what TypeBox emits), made on first use so
 * importing the contract stays cheap. Strict: unknown keywords, `required` names without a property and
 * ambiguous tuples are schema errors.
 */
export function contractAjv(): Ajv {
  if (instance === undefined) {
    const { Ajv: Draft07 } = load('ajv') as typeof AjvModule;
    instance = new Draft07(OPTIONS);
    addFormats(instance);
    // An annotation for MCP transports (SEP-2243), checked by mcpHeaderProblem; it constrains no value.
    instance.addKeyword({ keyword: MCP_HEADER_KEYWORD, schemaType: 'string' });
  }
  return instance;
}

/**
 * The ajv instance for `schema`: the 2020-12 one for a schema that declares
 * `"$schema": "https://json-schema.org/draft/2020-12/schema"` (`$anchor`, `prefixItems`,
 * `unevaluatedProperties`…), else {@link contractAjv}. Both are strict, with the same options.
 */
export function ajvFor(schema: unknown): Ajv | Ajv2020 {
  if ((schema as { $schema?: unknown } | null)?.$schema !== JSON_SCHEMA_2020_12) return contractAjv();
  if (instance2020 === undefined) {
    // Loaded on first use: most hosts never see a 2020-12 schema, and its vocabularies cost start-up time.
    const { Ajv2020: Dialect } = load('ajv/dist/2020.js') as typeof Ajv2020Module;
    instance2020 = new Dialect(OPTIONS);
    addFormats(instance2020 as unknown as Ajv);
    // ajv resolves `$anchor` in references but its strict mode does not list it as a keyword.
    instance2020.addKeyword('$anchor');
    instance2020.addKeyword({ keyword: MCP_HEADER_KEYWORD, schemaType: 'string' });
  }
  return instance2020;
}
