import type { ValidateFunction } from 'ajv';
import { ajvFor } from './ajv.js';
import { checkContent, isBase64, type ContentBlock } from './content.js';
import { describeThrown } from './describe-thrown.js';
import type { CompleteFunction, PromptMessage, UnitContext } from './prompt.js';
import type { ResourceContents } from './resource.js';
import { formatSchemaErrors } from './schema-strictness.js';
import {
  inputNeededProblem,
  unanswerableKinds,
  type ToolInputChannel,
  type ToolInputNeeded,
} from './input-required.js';
import { DEFAULT_MAX_RESULT_BYTES } from './tool-executor.js';
import type { RegisteredPrompt, RegisteredResource } from './unit-registry.js';
import { uriProblem } from './uri-template.js';

/**
 * Codes of a prompt request, resource read or completion that failed. Codes are API: a client
 * branches on them, so a code is never renamed or reused.
 */
export const UnitErrorCode = {
  PROMPT_NOT_FOUND: 'PROMPT_NOT_FOUND',
  RESOURCE_NOT_FOUND: 'RESOURCE_NOT_FOUND',
  /** The arguments are not strings, or do not match the prompt's schema. */
  INVALID_ARGUMENTS: 'INVALID_ARGUMENTS',
  /** The URI asked for is no URI a resource may have (`..`, control characters, no scheme, too long). */
  INVALID_URI: 'INVALID_URI',
  /** `render` threw or rejected. */
  RENDER_FAILED: 'RENDER_FAILED',
  /** `read` threw or rejected. */
  READ_FAILED: 'READ_FAILED',
  /** A `complete` function threw or rejected. */
  COMPLETION_FAILED: 'COMPLETION_FAILED',
  /** `render`, `read` or `complete` did not answer within the time limit. */
  TIMEOUT: 'TIMEOUT',
  /** The messages or contents are larger than the bound; nothing of them is sent. */
  RESULT_TOO_LARGE: 'RESULT_TOO_LARGE',
  /** `render` or `read` returned something that is not messages or contents. */
  MALFORMED_RESULT: 'MALFORMED_RESULT',
  /** `render` needs the client's answers first (`inputRequired` holds its requests, when the caller can answer them). */
  INPUT_REQUIRED: 'INPUT_REQUIRED',
  /** `render` needs the client's model, and this caller cannot give a completion: call from an MCP client that declares sampling. */
  SAMPLING_UNAVAILABLE: 'SAMPLING_UNAVAILABLE',
  /** `render` needs the client's roots, and this caller cannot list them: call from an MCP client that declares roots. */
  ROOTS_UNAVAILABLE: 'ROOTS_UNAVAILABLE',
} as const;
export type UnitErrorCode = (typeof UnitErrorCode)[keyof typeof UnitErrorCode];

/** The outcome of a unit request: its value, or a failure with a code and a message for the caller. */
export type UnitOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly code: UnitErrorCode;
      readonly message: string;
      /** A render's requests to the client, when the caller can answer them all (code INPUT_REQUIRED). */
      readonly inputRequired?: ToolInputNeeded;
    };

export interface UnitCallOptions {
  /** Milliseconds `render`, `read` or `complete` may take. Default {@link DEFAULT_UNIT_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** The largest answer, in bytes. Default 1 MiB, the executor's bound on a tool result. */
  readonly maxBytes?: number;
  /** The caller's cancellation. */
  readonly signal?: AbortSignal;
  readonly sessionId?: string;
  readonly mode?: string;
  /** What the caller can answer, and its answers, for a `render` that asks the client. */
  readonly input?: ToolInputChannel;
}

/** The default time limit of one render, read or completion. */
export const DEFAULT_UNIT_TIMEOUT_MS = 10_000;
/** The most completion values one answer carries (MCP's bound). */
export const MAX_COMPLETION_VALUES = 100;
const MAX_ARGUMENT_LENGTH = 65_536;

const fail = <T>(code: UnitErrorCode, message: string): UnitOutcome<T> => ({ ok: false, code, message });

/** Runs a package's function under a time limit and the caller's signal; its throw or time-out becomes a failure, never an exception. */
async function bounded<T>(
  work: (context: UnitContext) => T | Promise<T>,
  options: UnitCallOptions,
  what: string,
  failedCode: UnitErrorCode,
): Promise<UnitOutcome<T>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_UNIT_TIMEOUT_MS;
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([controller.signal, options.signal]);
  const context: UnitContext = {
    signal,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.input === undefined ? {} : { input: options.input }),
  };
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<UnitOutcome<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`${what} timed out`));
      resolve(
        fail(
          UnitErrorCode.TIMEOUT,
          `${what} did not answer within ${timeoutMs} ms; nothing was sent. Try again later.`,
        ),
      );
    }, timeoutMs);
  });
  const ran = (async (): Promise<UnitOutcome<T>> => {
    try {
      return { ok: true, value: await work(context) };
    } catch (error) {
      return fail(failedCode, `${what} failed: ${describeThrown(error).slice(0, 1000)}`);
    }
  })();
  try {
    return await Promise.race([ran, limit]);
  } finally {
    clearTimeout(timer);
  }
}

const validators = new WeakMap<RegisteredPrompt, ValidateFunction>();

/**
 * Renders a prompt: checks the arguments (strings only, then the prompt's schema), runs `render` under
 * the time limit, and checks what it returned (roles, content blocks, the size bound). Never throws.
 */
export async function renderPrompt(
  prompt: RegisteredPrompt,
  args: unknown,
  options: UnitCallOptions = {},
): Promise<UnitOutcome<{ description: string; messages: PromptMessage[] }>> {
  const given = args ?? {};
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (given === null || typeof given !== 'object' || Array.isArray(given))
    return fail(UnitErrorCode.INVALID_ARGUMENTS, `Prompt "${prompt.name}" takes an object of string arguments.`);
  const entries = Object.entries(given as Record<string, unknown>);
  const notString = entries.find(([, value]) => typeof value !== 'string' || value.length > MAX_ARGUMENT_LENGTH);
  if (notString !== undefined)
    return fail(
      UnitErrorCode.INVALID_ARGUMENTS,
      `Prompt "${prompt.name}": argument '${notString[0].slice(0, 64)}' must be a string of at most ${MAX_ARGUMENT_LENGTH} characters (MCP prompt arguments are strings).`,
    );
  let validate = validators.get(prompt);
  if (validate === undefined) validators.set(prompt, (validate = ajvFor(prompt.argsSchema).compile(prompt.argsSchema)));
  const copy = Object.fromEntries(entries);
  if (!validate(copy))
    return fail(
      UnitErrorCode.INVALID_ARGUMENTS,
      `Prompt "${prompt.name}" refused its arguments: ` +
        `${formatSchemaErrors(validate.errors ?? [], 'arguments')}. Arguments: ` +
        `${prompt.arguments.map((arg) => `${arg.name}${arg.required ? ' (required)' : ''}`).join(', ') || 'none'}.`,
    );
  const rendered = await bounded(
    (context) => prompt.prompt.render(copy as never, context),
    options,
    `Prompt "${prompt.name}"`,
    UnitErrorCode.RENDER_FAILED,
  );
  if (!rendered.ok) return rendered;
  const output = rendered.value;
  const asked = askedOf(prompt.name, output, options.input);
  if (asked !== undefined) return asked;
  const list: unknown[] =
    typeof output === 'string'
      ? [{ role: 'user', content: { type: 'text', text: output } }]
      : Array.isArray(output)
        ? output
        : [output];
  const malformed = (problem: string) =>
    fail<never>(UnitErrorCode.MALFORMED_RESULT, `Prompt "${prompt.name}" rendered no valid messages: ${problem}.`);
  if (list.length === 0) return malformed('the list is empty');
  const roles: Array<'user' | 'assistant'> = [];
  const blocks: unknown[] = [];
  for (const [index, message] of list.entries()) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'assistant')
      return malformed(`message ${index} has role ${describeThrown(role).slice(0, 40)}, not "user" or "assistant"`);
    roles.push(role);
    blocks.push((message as { content?: unknown }).content);
  }
  const checked = checkContent(blocks, options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES);
  if (!checked.ok)
    return checked.tooLarge
      ? fail(
          UnitErrorCode.RESULT_TOO_LARGE,
          `Prompt "${prompt.name}" rendered more than ${options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES} bytes; nothing was sent.`,
        )
      : malformed(checked.problem);
  return {
    ok: true,
    value: {
      description: prompt.description,
      messages: checked.blocks.map((content: ContentBlock, i) => ({ role: roles[i]!, content })),
    },
  };
}

/**
 * Reads a resource at `uri` (a fixed URI, or one matching its template with these variables): runs
 * `read` under the time limit and checks what it returned (text or base64, the size bound). Never throws.
 */
export async function readResource(
  resource: RegisteredResource,
  uri: string,
  variables: Readonly<Record<string, string>>,
  options: UnitCallOptions = {},
): Promise<UnitOutcome<ResourceContents[]>> {
  const problem = uriProblem(uri);
  if (problem !== undefined)
    return fail(UnitErrorCode.INVALID_URI, `Cannot read ${JSON.stringify(uri.slice(0, 200))}: ${problem}.`);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES;
  const read = await bounded(
    (context) => resource.resource.read({ uri, variables }, context),
    options,
    `Resource "${resource.name}"`,
    UnitErrorCode.READ_FAILED,
  );
  if (!read.ok) return read;
  const output = read.value;
  const malformed = (what: string) =>
    fail<never>(UnitErrorCode.MALFORMED_RESULT, `Resource "${resource.name}" returned no valid contents: ${what}.`);
  const tooLarge = () =>
    fail<never>(
      UnitErrorCode.RESULT_TOO_LARGE,
      `Resource "${resource.name}" at ${uri} is larger than ${maxBytes} bytes; nothing was sent.`,
    );
  const list: unknown[] =
    typeof output === 'string'
      ? [{ uri, mimeType: resource.mimeType, text: output }]
      : output instanceof Uint8Array
        ? [
            {
              uri,
              mimeType: resource.mimeType,
              blob: output.byteLength > maxBytes ? '' : Buffer.from(output).toString('base64'),
            },
          ]
        : Array.isArray(output)
          ? output
          : [output];
  if (output instanceof Uint8Array && output.byteLength > maxBytes) return tooLarge();
  if (list.length === 0 || list.length > 256) return malformed(`${list.length} entries; give 1 to 256`);
  const contents: ResourceContents[] = [];
  let bytes = 0;
  for (const [index, entry] of list.entries()) {
    if (entry === null || typeof entry !== 'object')
      return malformed(`entry ${index} is ${describeThrown(entry).slice(0, 40)}`);
    const { uri: own, mimeType, text, blob } = entry as Record<string, unknown>;
    const entryUri = own === undefined ? uri : own;
    if (typeof entryUri !== 'string' || uriProblem(entryUri) !== undefined)
      return malformed(`entry ${index} has no valid uri`);
    const body = typeof text === 'string' ? text : blob;
    if (typeof body !== 'string' || (typeof text === 'string') === (typeof blob === 'string'))
      return malformed(`entry ${index} needs exactly one of text (a string) and blob (base64)`);
    bytes += body.length + entryUri.length + 64;
    if (bytes > maxBytes) return tooLarge();
    if (typeof blob === 'string' && blob !== '' && !isBase64(blob))
      return malformed(`entry ${index}'s blob is not base64`);
    const type = typeof mimeType === 'string' ? mimeType : resource.mimeType;
    contents.push(
      typeof text === 'string'
        ? { uri: entryUri, mimeType: type, text }
        : { uri: entryUri, mimeType: type, blob: blob as string },
    );
  }
  return { ok: true, value: contents };
}

/**
 * Completions for a prompt argument or a template variable: its `complete` function (bounded), else the
 * values a union of literals allows, starting with what was typed. At most {@link MAX_COMPLETION_VALUES}.
 */
export async function completeUnit(
  unit: RegisteredPrompt | RegisteredResource,
  name: string,
  value: string,
  context: Readonly<Record<string, string>>,
  options: UnitCallOptions = {},
): Promise<UnitOutcome<{ values: string[]; total: number; hasMore: boolean }>> {
  const complete: CompleteFunction | undefined = Object.hasOwn(unit.complete, name) ? unit.complete[name] : undefined;
  let values: readonly unknown[];
  if (complete !== undefined) {
    const answered = await bounded(
      (unitContext) => complete(String(value), { ...unitContext, arguments: { ...context } }),
      options,
      `Completing "${name}" of ${unit.kind} "${unit.name}"`,
      UnitErrorCode.COMPLETION_FAILED,
    );
    if (!answered.ok) return answered;
    if (!Array.isArray(answered.value))
      return fail(
        UnitErrorCode.MALFORMED_RESULT,
        `Completing "${name}" of ${unit.kind} "${unit.name}" returned no list of strings.`,
      );
    values = answered.value;
  } else {
    const allowed = unit.kind === 'prompt' ? unit.arguments.find((arg) => arg.name === name)?.values : undefined;
    values = (allowed ?? []).filter((candidate) => candidate.startsWith(value));
  }
  const strings = values.filter(
    (candidate): candidate is string => typeof candidate === 'string' && candidate.length <= 4096,
  );
  return {
    ok: true,
    value: {
      values: strings.slice(0, MAX_COMPLETION_VALUES),
      total: strings.length,
      hasMore: strings.length > MAX_COMPLETION_VALUES,
    },
  };
}

const CANNOT_ANSWER = {
  elicitation: [
    UnitErrorCode.INPUT_REQUIRED,
    'an answer from the user, and this caller cannot ask it (declare elicitation)',
  ],
  sampling: [
    UnitErrorCode.SAMPLING_UNAVAILABLE,
    "a completion from the client's model, and this caller cannot give one (declare sampling)",
  ],
  roots: [UnitErrorCode.ROOTS_UNAVAILABLE, "the client's roots, and this caller cannot list them (declare roots)"],
} as const;

/**
 * A render that returned `InvokeResult.inputRequired(…)`: its requests, checked as a tool's are, when
 * the caller can answer every one; else the failure naming what it cannot answer. Undefined for a render
 * that returned messages.
 */
function askedOf(name: string, output: unknown, input: ToolInputChannel | undefined): UnitOutcome<never> | undefined {
  if (typeof output !== 'object' || output === null || (output as { successful?: unknown }).successful !== false)
    return undefined;
  const needed = (output as { inputRequired?: unknown }).inputRequired;
  if (needed === undefined)
    return fail(UnitErrorCode.MALFORMED_RESULT, `Prompt "${name}" rendered a failed result, not messages.`);
  const problem = inputNeededProblem(needed);
  if (problem !== undefined)
    return fail(UnitErrorCode.MALFORMED_RESULT, `Prompt "${name}" asked for input malformed: ${problem}.`);
  const [first] = unanswerableKinds(needed as ToolInputNeeded, input);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a query that matched nothing gives no row: rows[0] is undefined, which the type (no noUncheckedIndexedAccess) leaves out
  if (first === undefined)
    return {
      ok: false,
      code: UnitErrorCode.INPUT_REQUIRED,
      message: `Prompt "${name}" needs answers from the client first.`,
      inputRequired: needed as ToolInputNeeded,
    };
  const [code, what] = CANNOT_ANSWER[first];
  return fail(code, `Prompt "${name}" needs ${what}, so nothing was rendered.`);
}
