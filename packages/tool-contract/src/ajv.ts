import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { MCP_HEADER_KEYWORD } from './mcp-header.js';

let instance: Ajv | undefined;

/**
 * The one ajv instance of this package, made on first use so importing the contract stays cheap.
 * Strict: unknown keywords, `required` names without a property and ambiguous tuples are schema errors.
 */
export function contractAjv(): Ajv {
  if (instance === undefined) {
    instance = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false, messages: true });
    addFormats.default(instance);
    // An annotation for MCP transports (SEP-2243), checked by mcpHeaderProblem; it constrains no value.
    instance.addKeyword({ keyword: MCP_HEADER_KEYWORD, schemaType: 'string' });
  }
  return instance;
}
