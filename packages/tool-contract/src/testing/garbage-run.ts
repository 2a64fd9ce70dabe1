import { CapturingAdminLogger } from '../admin-logger.js';
import type { AgentTool, AnyAgentToolClass } from '../agent-tool.js';
import { decodeArguments } from '../arguments.js';
import { ExecutionErrorCode } from '../errors.js';
import type { InvokeResult } from '../invoke-result.js';
import type { JsonSchema } from '../schema.js';
import { AgentToolExecutor } from '../tool-executor.js';
import { AgentToolRegistry, type RegisteredTool } from '../tool-registry.js';
import { ContractCheckCode, type ContractFinding, type ContractFindingCode } from './codes.js';
import { garbageArguments } from './garbage.js';
import { describeMalformedResult } from './invoke-result-shape.js';
import { withStandIns } from './stand-ins.js';
import { testContext } from './test-context.js';
import type { GarbageRun, VerifyToolContractOptions } from './verify-options.js';

// The kit's run of garbage arguments against a built tool, and how it judges what the tool answers.

const MAX_FAILURE_MESSAGE_LENGTH = 16_384;

interface Accumulated {
  readonly code: ContractFindingCode;
  readonly via: GarbageRun['via'];
  readonly inputs: string[];
  readonly detail: string;
}

/** The tool as the kit's checks run it: one instance, a factory for more, and a registry to run it by name. */
export interface Built {
  readonly instance: AgentTool;
  readonly registry: AgentToolRegistry;
  readonly build: () => AgentTool;
  readonly logger: CapturingAdminLogger;
  readonly standIns: readonly string[];
  readonly standInNote: () => string;
}

/** Builds the tool with the kit's dependencies; undefined (and a violation) when it cannot be built. */
export function prepareTool(
  name: string,
  toolClass: AnyAgentToolClass,
  parameters: JsonSchema,
  registrable: boolean,
  options: VerifyToolContractOptions,
  violations: ContractFinding[],
): Built | undefined {
  const logger = new CapturingAdminLogger();
  const provided = { logger, ...options.dependencies };
  const { dependencies, standIns } =
    options.standIns === false ? { dependencies: provided, standIns: new Set<string>() } : withStandIns(name, provided);
  const build = (): AgentTool =>
    options.createTool ? options.createTool(toolClass, dependencies) : new toolClass(dependencies);
  const standInNote = () => (standIns.size > 0 ? ` It was given stand-ins for: ${[...standIns].join(', ')}.` : '');
  try {
    const instance = build();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    if (instance === null || typeof instance !== 'object' || typeof instance.execute !== 'function')
      throw new TypeError('createTool did not return an object with execute()');
    return {
      instance,
      registry: registryFor(name, toolClass, parameters, registrable),
      build,
      logger,
      standIns: [...standIns],
      standInNote,
    };
  } catch (error) {
    violations.push({
      code: ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE,
      message:
        `Tool "${name}" could not be built to run garbage arguments: ` +
        `${errorText(error)}.${standInNote()} Fix: give the kit its dependencies (\`dependencies\` ` +
        `or \`createTool\` in verifyToolContract/describeToolContract, or the package's contract ` +
        `setup module; see docs/contract.md).`,
    });
    return undefined;
  }
}

export async function runGarbage(
  name: string,
  parameters: JsonSchema,
  built: Built,
  options: VerifyToolContractOptions,
  violations: ContractFinding[],
  warnings: ContractFinding[],
): Promise<GarbageRun[]> {
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const { instance, logger, standInNote } = built;
  const executor = new AgentToolExecutor({
    registry: built.registry,
    logger,
    createTool: built.build,
    defaultTimeoutMs: callTimeoutMs,
    cancelGraceMs: 10,
    // The kit judges what the tool answers: the executor must not cut a failure message before the kit sees it.
    maxErrorMessageLength: Number.MAX_SAFE_INTEGER,
  });
  const runs: GarbageRun[] = [];
  const found = new Map<string, Accumulated>();
  const note = (code: ContractFindingCode, via: GarbageRun['via'], input: string, detail: string) => {
    const key = `${code}\u0000${via}`;
    const entry = found.get(key) ?? { code, via, inputs: [], detail };
    entry.inputs.push(input);
    found.set(key, entry);
  };

  for (const { label, json } of garbageArguments(parameters)) {
    const expected: GarbageRun['expected'] = decodeArguments(name, parameters, json).ok ? 'any' : 'failure';
    for (const via of ['executor', 'execute'] as const) {
      const exceptionsBefore = logger.exceptions().length;
      const prototypes = takePrototypeSnapshot();
      // Through the executor, its own time-out answers first; a direct call has only this one.
      const settled = await settleWithin(
        () =>
          via === 'executor'
            ? executor.execute(name, json, testContext(), { timeoutMs: callTimeoutMs })
            : instance.execute(json, testContext()),
        via === 'executor' ? callTimeoutMs + 1_000 : callTimeoutMs,
      );
      for (const change of restorePrototypes(prototypes)) {
        violations.push({
          code: ContractCheckCode.PROTOTYPE_POLLUTED,
          message:
            `Tool "${name}" changed ${change} while handling ${label} (via ${viaText(via)}): an ` +
            `attacker-controlled key reached a prototype. Fix: never merge or assign arguments key by ` +
            `key into objects; read the validated arguments only (the kit restored the prototype).`,
        });
      }
      const exception = logger.exceptions().slice(exceptionsBefore)[0];
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
      const run = judge(settled, expected, via, exception?.message);
      runs.push({
        input: label,
        via,
        expected,
        outcome: run.outcome,
        ...(run.code === undefined ? {} : { code: run.code }),
      });
      if (run.finding) note(run.finding.code, via, label, run.finding.detail);
    }
  }

  for (const { code, via, inputs, detail } of found.values()) {
    const { what, fix, warning } = GARBAGE_TEXT[code as keyof typeof GARBAGE_TEXT];
    const list =
      inputs.length > 4 ? `${inputs.slice(0, 4).join('; ')}; and ${inputs.length - 4} more` : inputs.join('; ');
    const message =
      `Tool "${name}" ${what.replace('{ms}', String(callTimeoutMs))} via ${viaText(via)}, on ` +
      `${inputs.length} garbage input${inputs.length === 1 ? '' : 's'} (${list}). First: ` +
      `${detail}.${code === ContractCheckCode.VALID_ARGUMENTS_THREW ? standInNote() : ''} Fix: ${fix}.`;
    (warning ? warnings : violations).push({ code, message });
  }
  return runs;
}

const GARBAGE_TEXT = {
  [ContractCheckCode.GARBAGE_ACCEPTED]: {
    what: 'returned a successful result for arguments its schema refuses',
    fix: 'validate the arguments before acting (extend TypedAgentTool, or call decodeArguments) and return InvokeResult.fromError(...) when they are invalid',
    warning: false,
  },
  [ContractCheckCode.GARBAGE_THREW]: {
    what: 'threw instead of returning a failed InvokeResult',
    fix: 'never throw from execute: validate first, and turn unexpected exceptions into a failed InvokeResult (TypedAgentTool does both)',
    warning: false,
  },
  [ContractCheckCode.GARBAGE_MALFORMED_RESULT]: {
    what: 'answered with something that is not a well-formed InvokeResult',
    fix: 'return InvokeResult.create(jsonText) or InvokeResult.fromError(message, code)',
    warning: false,
  },
  [ContractCheckCode.GARBAGE_TIMED_OUT]: {
    what: 'gave no answer within {ms} ms',
    fix: 'validate the arguments before any slow work, and observe the AbortSignal',
    warning: false,
  },
  [ContractCheckCode.FAILURE_MESSAGE_TOO_LONG]: {
    what: `returned failure messages longer than ${MAX_FAILURE_MESSAGE_LENGTH} characters`,
    fix: "describe bad values briefly (decodeArguments cuts them to 40 characters) instead of echoing them into the model's context",
    warning: false,
  },
  [ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE]: {
    what: 'could not be built by the executor',
    fix: "give the kit the tool's dependencies (see docs/contract.md)",
    warning: false,
  },
  [ContractCheckCode.VALID_ARGUMENTS_THREW]: {
    what: 'threw on arguments its schema accepts (caught as TOOL_EXCEPTION)',
    fix: 'if a stand-in was called, give the kit a fake for it; otherwise handle these arguments',
    warning: true,
  },
} as const;

interface Judgement {
  readonly outcome: GarbageRun['outcome'];
  readonly code?: string;
  readonly finding?: { readonly code: ContractFindingCode; readonly detail: string };
}

function judge(
  settled: Settled,
  expected: GarbageRun['expected'],
  via: GarbageRun['via'],
  exception: string | undefined,
): Judgement {
  if (settled.kind === 'threw')
    return { outcome: 'threw', finding: { code: ContractCheckCode.GARBAGE_THREW, detail: errorText(settled.error) } };
  if (settled.kind === 'timed-out')
    return { outcome: 'timed-out', finding: { code: ContractCheckCode.GARBAGE_TIMED_OUT, detail: 'no answer' } };
  const malformed = describeMalformedResult(settled.value);
  if (malformed !== undefined)
    return { outcome: 'malformed', finding: { code: ContractCheckCode.GARBAGE_MALFORMED_RESULT, detail: malformed } };
  const result = settled.value as InvokeResult<string>;
  if (result.successful) {
    return expected === 'failure'
      ? {
          outcome: 'succeeded',
          finding: {
            code: ContractCheckCode.GARBAGE_ACCEPTED,
            detail: `result ${JSON.stringify(result.result.slice(0, 80))}`,
          },
        }
      : { outcome: 'succeeded' };
  }
  const code = result.errors[0]?.code;
  const outcome = { outcome: 'failed', ...(code === undefined ? {} : { code }) } as const;
  const message = result.errors.map((error) => error.message).join(' ');
  switch (code) {
    case undefined: // a failure that names no error: only its message length is judged, below
      break;
    case ExecutionErrorCode.MALFORMED_RESULT:
      return {
        ...outcome,
        finding: { code: ContractCheckCode.GARBAGE_MALFORMED_RESULT, detail: `the executor replaced it: "${message}"` },
      };
    case ExecutionErrorCode.TIMEOUT:
    case ExecutionErrorCode.OUTCOME_UNKNOWN:
      return { ...outcome, finding: { code: ContractCheckCode.GARBAGE_TIMED_OUT, detail: `"${message}"` } };
    case ExecutionErrorCode.TOOL_UNAVAILABLE:
      return { ...outcome, finding: { code: ContractCheckCode.TOOL_NOT_CONSTRUCTIBLE, detail: `"${message}"` } };
    case ExecutionErrorCode.TOOL_EXCEPTION: {
      const detail = `${via === 'executor' ? 'the executor' : 'the tool'} caught ${exception === undefined ? 'an exception' : `"${exception}"`}`;
      return {
        ...outcome,
        finding: {
          code: expected === 'failure' ? ContractCheckCode.GARBAGE_THREW : ContractCheckCode.VALID_ARGUMENTS_THREW,
          detail,
        },
      };
    }
  }
  if (message.length > MAX_FAILURE_MESSAGE_LENGTH) {
    return {
      ...outcome,
      finding: {
        code: ContractCheckCode.FAILURE_MESSAGE_TOO_LONG,
        detail: `${message.length} characters: "${message.slice(0, 60)}…"`,
      },
    };
  }
  return outcome;
}

/**
 * The registry the executor looks the tool up in. A tool that broke a registry rule cannot be registered,
 * yet its garbage handling still matters: it is then served from a one-entry lookup with the same fields.
 */
function registryFor(
  name: string,
  toolClass: AnyAgentToolClass,
  parameters: JsonSchema,
  registrable: boolean,
): AgentToolRegistry {
  if (registrable) {
    const registry = new AgentToolRegistry();
    registry.registerTool(toolClass);
    return registry;
  }
  const timeout = (toolClass as { TimeoutMs?: unknown }).TimeoutMs;
  const entry = {
    name,
    parameters,
    toolClass,
    timeoutMs: Number.isInteger(timeout) && (timeout as number) > 0 ? timeout : undefined,
  } as unknown as RegisteredTool;
  // The executor reads only get() and names().
  return {
    get: (wanted: string) => (wanted === name ? entry : undefined),
    names: () => [name],
  } as unknown as AgentToolRegistry;
}

type Settled =
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'threw'; readonly error: unknown }
  | { readonly kind: 'timed-out' };

/** Calls `call`, catching a synchronous throw as well as a rejection, and gives up after `ms`. */
function settleWithin(call: () => unknown, ms: number): Promise<Settled> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'timed-out' }), ms);
    const done = (settled: Settled) => {
      clearTimeout(timer);
      resolve(settled);
    };
    try {
      Promise.resolve(call()).then(
        (value) => done({ kind: 'value', value }),
        (error: unknown) => done({ kind: 'threw', error }),
      );
    } catch (error) {
      done({ kind: 'threw', error });
    }
  });
}

const PROTOTYPES: ReadonlyArray<readonly [string, object]> = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Boolean.prototype', Boolean.prototype],
];

type PrototypeSnapshot = ReadonlyArray<readonly [string, object, Map<PropertyKey, PropertyDescriptor>]>;

function takePrototypeSnapshot(): PrototypeSnapshot {
  return PROTOTYPES.map(
    ([label, prototype]) =>
      [
        label,
        prototype,
        new Map(Reflect.ownKeys(prototype).map((key) => [key, Reflect.getOwnPropertyDescriptor(prototype, key)!])),
      ] as const,
  );
}

/** What changed on the built-in prototypes since `snapshot`, put back as it was. */
function restorePrototypes(snapshot: PrototypeSnapshot): string[] {
  const changes: string[] = [];
  for (const [label, prototype, before] of snapshot) {
    for (const key of Reflect.ownKeys(prototype)) {
      const was = before.get(key);
      const now = Reflect.getOwnPropertyDescriptor(prototype, key)!;
      if (was === undefined) {
        changes.push(`${label}.${String(key)} (added)`);
        Reflect.deleteProperty(prototype, key);
      } else if (was.value !== now.value || was.get !== now.get || was.set !== now.set) {
        changes.push(`${label}.${String(key)} (replaced)`);
        Reflect.defineProperty(prototype, key, was);
      }
    }
    for (const [key, was] of before) {
      if (!Reflect.getOwnPropertyDescriptor(prototype, key)) {
        changes.push(`${label}.${String(key)} (deleted)`);
        Reflect.defineProperty(prototype, key, was);
      }
    }
  }
  return changes;
}

function viaText(via: GarbageRun['via']): string {
  return via === 'executor' ? 'an AgentToolExecutor' : 'its own execute()';
}

/** An error in one line, without a final period (messages add their own punctuation). */
export function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message.split('\n')[0]}` : String(error);
  return text.replace(/\.+$/, '');
}
