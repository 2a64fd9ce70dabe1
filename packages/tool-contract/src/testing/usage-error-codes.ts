import { definedFrom } from '../define-tool.js';
import { invokeTool } from '../typed-agent-tool.js';
import { takesSignal } from './cancellation-check.js';
import { ContractCheckCode, type ContractFinding } from './codes.js';

/** `ExecutionErrorCode.TIMEOUT`, `ListModesErrorCode.CATALOG_UNAVAILABLE`: a member of a code registry. */
const REGISTRY_MEMBER = /\b[A-Za-z_$][\w$]*Codes?\.([A-Z][A-Z0-9_]*[A-Z0-9])\b/g;
/** `fromError(message, 'DIVIDE_BY_ZERO')`: a literal code as the second argument (one level of nested parentheses). */
const LITERAL_CODE = /\bfromError\((?:[^()]|\([^()]*\))*?,\s*(['"`])([A-Z][A-Z0-9_]*[A-Z0-9])\1\s*\)/g;
/** The cancelled shape of AGN-005 §8, as a guide names it. */
const CANCELLED_SHAPE = 'wasCancelled';

/** Where a code the guide must list comes from, for the warning's message. */
type Source = 'source' | 'base' | 'signal';

/**
 * The error codes a tool class can be seen to return without running it: codes in its source text
 * (`toolClass.toString()`, or the `run` or `createRun` of a class made by defineTool: registry members
 * and literal `fromError` codes), the codes TypedAgentTool
 * returns for its subclasses, and, for a tool that takes the AbortSignal, TIMEOUT and the cancelled
 * shape. Codes returned from helpers outside the class are not found.
 */
export function errorCodesOf(toolClass: Function, instance?: object): Map<string, Source> {
  const found = new Map<string, Source>();
  // The class and the classes it extends, up to TypedAgentTool (whose codes are listed as the base's).
  for (
    let current: unknown = toolClass;
    typeof current === 'function' && current !== Function.prototype;
    current = Object.getPrototypeOf(current)
  ) {
    const prototype = (current as { prototype?: unknown }).prototype;
    if (
      prototype !== null &&
      typeof prototype === 'object' &&
      Object.prototype.hasOwnProperty.call(prototype, invokeTool)
    )
      break;
    let text = '';
    try {
      text = Function.prototype.toString.call(current);
      // defineTool's class is the same for every tool: the tool's own code is the function it was given.
      const from = (current as { [definedFrom]?: unknown })[definedFrom];
      if (typeof from === 'function' && Object.prototype.hasOwnProperty.call(current, definedFrom))
        text += `\n${Function.prototype.toString.call(from)}`;
    } catch {
      // a proxy: nothing to read
    }
    for (const match of text.matchAll(REGISTRY_MEMBER)) if (!found.has(match[1]!)) found.set(match[1]!, 'source');
    for (const match of text.matchAll(LITERAL_CODE)) if (!found.has(match[2]!)) found.set(match[2]!, 'source');
  }
  const prototype = (toolClass as { prototype?: unknown }).prototype;
  if (prototype !== null && typeof prototype === 'object') {
    if (typeof (prototype as Record<symbol, unknown>)[invokeTool] === 'function') {
      for (const code of ['INVALID_ARGUMENTS', 'TOOL_EXCEPTION']) if (!found.has(code)) found.set(code, 'base');
    }
    // An instance, when there is one, also shows a `run` set in the constructor (defineTool's createRun).
    if (takesSignal((instance ?? prototype) as never)) {
      if (!found.has('TIMEOUT')) found.set('TIMEOUT', 'signal');
      found.set(CANCELLED_SHAPE, 'signal');
    }
  }
  return found;
}

const WHY: Record<Source, string> = {
  source: 'which its source returns',
  base: 'which TypedAgentTool returns for it (invalid arguments, an exception in run)',
  signal: 'which a tool that takes the AbortSignal can answer (a time-out, a cancellation)',
};

/** Warns for each code the tool can be seen to return that its usage guide never names (AGN-005 §7.2.1). */
export function checkUsageErrorCodes(
  name: string,
  toolClass: Function,
  warnings: ContractFinding[],
  instance?: object,
): void {
  const descriptor = Object.getOwnPropertyDescriptor(toolClass, 'ToolUsageMetadata');
  const guide = descriptor && 'value' in descriptor ? descriptor.value : undefined;
  if (typeof guide !== 'string' || guide.trim() === '') return; // a violation of the rules already
  for (const [code, source] of errorCodesOf(toolClass, instance)) {
    if (new RegExp(`\\b${code}\\b`).test(guide)) continue;
    const what =
      code === CANCELLED_SHAPE
        ? 'the cancelled shape (a successful result with "wasCancelled": true)'
        : `the error code ${code}`;
    warnings.push({
      code: ContractCheckCode.USAGE_ERROR_CODE_UNDOCUMENTED,
      message: `ToolUsageMetadata of ${name} never names ${what}, ${WHY[source]}. Fix: list it under "Error codes:" with what it means and what to do (see "A usage guide" in docs/rules.md).`,
    });
  }
}
