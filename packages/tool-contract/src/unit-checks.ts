import { TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, suggestSnakeCase } from './contract-rules.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode, type ContractViolation } from './errors.js';
import type { CompleteFunction } from './prompt.js';

/** The checks prompts and resources share (unit-rules.ts, resource-rules.ts). @internal */

/** A mode key, as the mode catalog spells them. */
const MODE_KEY = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

export type Fail = (code: ContractErrorCode, rule: string, fix: string) => void;

/** Reads a field of a value a package handed over, which may be a Proxy or carry a throwing getter. */
export function field(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (error) {
    return { threw: describeThrown(error) } as const;
  }
}

export function violations(kind: 'Prompt' | 'Resource', candidate: unknown) {
  const found: ContractViolation[] = [];
  const name =
    candidate !== null && typeof candidate === 'object' && typeof field(candidate, 'name') === 'string'
      ? (field(candidate, 'name') as string)
      : undefined;
  const who = name === undefined ? `A ${kind.toLowerCase()}` : `${kind} "${name}"`;
  const fail: Fail = (code, rule, fix) =>
    found.push({
      code,
      tool: name ?? `(unnamed ${kind.toLowerCase()})`,
      message: `${who} breaks the contract: ${rule}. Fix: ${fix}.`,
    });
  return { found, fail, name };
}

export function checkName(name: unknown, fail: Fail, define: string): void {
  if (typeof name !== 'string' || name === '')
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      'it has no name',
      `give it one: ${define}({ name: 'acme_weekly_report', … })`,
    );
  else if (!TOOL_NAME_PATTERN.test(name))
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      `its name "${name}" is not lowercase_snake_case (${TOOL_NAME_PATTERN.source}), the rule tool names follow`,
      `rename it, for example to "${suggestSnakeCase(name)}"`,
    );
  else if (name.length > TOOL_NAME_MAX_LENGTH)
    fail(
      ContractErrorCode.UNIT_NAME_INVALID,
      `its name is ${name.length} characters long; at most ${TOOL_NAME_MAX_LENGTH} are allowed`,
      `shorten it to ${TOOL_NAME_MAX_LENGTH} characters or fewer`,
    );
}

export function checkText(value: unknown, key: string, required: boolean, fail: Fail): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value.trim() === '') || value.length > 4096) {
    fail(
      ContractErrorCode.UNIT_DESCRIPTION_INVALID,
      `its ${key} must be ${required ? 'a non-empty string' : 'a string'} of at most 4096 characters, got ${describeThrown(value).slice(0, 80)}`,
      `write one sentence saying what it is for: ${key}: '…'`,
    );
    return undefined;
  }
  return value;
}

export function checkModes(modes: unknown, fail: Fail): readonly string[] | undefined {
  if (modes === undefined) return undefined;
  if (!Array.isArray(modes) || modes.some((key) => typeof key !== 'string' || !MODE_KEY.test(key))) {
    fail(
      ContractErrorCode.UNIT_MODES_INVALID,
      `its modes ${(JSON.stringify(modes) as string | undefined) ?? String(modes)} is not a list of mode keys`,
      "declare modes: ['general'] with snake_case mode keys, or leave it out to be seen in every mode",
    );
    return undefined;
  }
  return Object.freeze([...(modes as string[])]);
}

export function checkComplete(
  complete: unknown,
  names: readonly string[],
  what: string,
  fail: Fail,
): Record<string, CompleteFunction> {
  if (complete === undefined) return {};
  const entries = complete !== null && typeof complete === 'object' ? Object.entries(complete) : undefined;
  const bad = entries?.filter(([key, value]) => !names.includes(key) || typeof value !== 'function');
  if (entries === undefined || bad!.length > 0) {
    fail(
      ContractErrorCode.UNIT_FUNCTION_INVALID,
      entries === undefined
        ? `its complete is ${describeThrown(complete)}, not an object of functions`
        : `its complete names ${bad!.map(([key]) => `"${key}"`).join(', ')}, which ${bad!.length > 1 ? 'are' : 'is'} not ${what} or not a function`,
      `complete only ${what} (${names.join(', ') || 'none'}), each with a function (value, context) => string[]`,
    );
    return {};
  }
  return Object.fromEntries(entries) as Record<string, CompleteFunction>;
}
