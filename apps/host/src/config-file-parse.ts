import { Ajv } from 'ajv';
import { AptixConfigFile, ConfigError } from './config-file.js';
import { closest } from './http/validation-messages.js';

let validateFile: ReturnType<Ajv['compile']> | undefined;

/** The values a union of literals allows (`Type.Union([Type.Literal(…), …])`), or undefined for any other schema. */
function constants(schema: unknown): unknown[] | undefined {
  const branches = (schema as { anyOf?: unknown } | undefined)?.anyOf;
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const values = branches.map((branch) => (branch as { const?: unknown }).const);
  return values.every((value) => value !== undefined) ? values : undefined;
}

/** A value as a problem names it: short JSON, cut past 40 characters. */
function describeValue(value: unknown): string {
  // JSON.stringify gives undefined for undefined, a function or a symbol (its types say string).
  const text = (JSON.stringify(value) as string | undefined) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Parses and validates the text of a config file; errors name the file and the field. */
export function parseConfigFile(text: string, path: string): AptixConfigFile {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Config file ${path} is not valid JSON: ${(error as Error).message}.`);
  }
  // verbose: each error carries its schema, so an unknown field can be matched against the known ones.
  validateFile ??= new Ajv({ allErrors: true, strict: false, verbose: true }).compile(AptixConfigFile);
  if (!validateFile(data)) {
    const errors = validateFile.errors ?? [];
    // A choice among fixed values (a union of literals) fails as one error per value and one for the
    // union: said once, with the values to choose from.
    const choices = errors.filter((error) => error.keyword === 'anyOf' && constants(error.parentSchema) !== undefined);
    const inChoice = (error: (typeof errors)[number]) =>
      choices.some(
        (choice) =>
          choice !== error &&
          error.schemaPath.startsWith(`${choice.schemaPath}/`) &&
          error.instancePath === choice.instancePath,
      );
    const problems = errors
      .filter((error) => !inChoice(error))
      .map((error) => {
        const field = error.instancePath.slice(1).replace(/\//g, '.') || '(root)';
        const values = error.keyword === 'anyOf' ? constants(error.parentSchema) : undefined;
        if (values !== undefined)
          return `${field} must be one of ${values.map((value) => JSON.stringify(value)).join(', ')} (it is ${describeValue(error.data)})`;
        if (error.keyword === 'additionalProperties') {
          const name = String(error.params.additionalProperty);
          const guess = closest(
            name,
            Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {}),
          );
          return `unknown field "${name}"${field === '(root)' ? '' : ` in ${field}`}${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`;
        }
        return `${field} ${error.message ?? 'is invalid'}`;
      });
    throw new ConfigError(
      `Config file ${path} is invalid: ${problems.join('; ')}. Fix these fields; every field and its meaning is in the table of docs/hosting.md ("Configuration").`,
    );
  }
  return data as AptixConfigFile;
}
