import type { AgentTool, AnyAgentToolClass } from '../agent-tool.js';
import type { ProcessSchemaEntry } from './process-schemas.js';

/**
 * Builds the tool instance the garbage arguments run against. `dependencies` holds `logger` (a
 * capturing one), whatever `dependencies` the caller gave, and stand-ins for anything else the tool reads.
 */
export type ContractToolFactory = (
  toolClass: AnyAgentToolClass,
  dependencies: Readonly<Record<string, unknown>>,
) => AgentTool;

export interface VerifyToolContractOptions {
  /** Constructor dependencies beyond `logger`, by name: real services or fakes. */
  readonly dependencies?: Readonly<Record<string, unknown>>;
  /** Full control over building instances; default `new ToolClass(dependencies)`. */
  readonly createTool?: ContractToolFactory;
  /** Stand in for dependencies nobody provided (see `withStandIns`). Default true. */
  readonly standIns?: boolean;
  /**
   * The module that exports the tool (its class by name, or in a `tools` list): two separate Node
   * processes import it to compare canonical schemas. Without it (or `otherProcessSchemas`), that check is skipped.
   */
  readonly modulePath?: string;
  /** The export of `modulePath` holding the tool list. Default `tools`. */
  readonly exportName?: string;
  /** `node` arguments for those processes; see `schemasInFreshProcess`. */
  readonly nodeArguments?: readonly string[];
  /** This tool's schemas as other processes read them, when the caller already has them (`verifyToolPackage` does). */
  readonly otherProcessSchemas?: readonly ProcessSchemaEntry[];
  /** How long one garbage call may take. Default 10 000 ms. */
  readonly callTimeoutMs?: number;
  /** Run the garbage arguments. Default true. */
  readonly garbage?: boolean;
  /**
   * Arguments the schema accepts, for the cancellation check (a tool that takes the AbortSignal must
   * settle soon after an abort). Default: the simplest arguments the schema accepts, when the kit can make them.
   */
  readonly cancellationArguments?: Readonly<Record<string, unknown>>;
  /** How long a cancelled call may take to settle. Default the executor's, 1 000 ms. */
  readonly cancelGraceMs?: number;
  /** Run the cancellation check. Default true. */
  readonly cancellation?: boolean;
}

/** One garbage input, sent one way, and what came back. */
export interface GarbageRun {
  readonly input: string;
  /** `executor`: by name through an AgentToolExecutor; `execute`: the instance's own `execute`. */
  readonly via: 'executor' | 'execute';
  /** `failure` when the schema refuses the input; `any` when it accepts it (e.g. `{}` with no required argument). */
  readonly expected: 'failure' | 'any';
  readonly outcome: 'failed' | 'succeeded' | 'threw' | 'malformed' | 'timed-out';
  /** The code of a failed result. */
  readonly code?: string;
}
