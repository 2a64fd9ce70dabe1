import {
  AptixToolError,
  createAptixTools,
  failureText,
  type AptixTools,
  type AptixToolsOptions,
} from '@aptix/adapter-core';
import { ExecutionErrorCode, InvokeResult } from '@aptix/tool-contract';
import { agentsToolOutput } from './content-output.js';
import { agentsUnits, type AgentsUnits } from './agents-units.js';
import { tool, type FunctionTool } from '@openai/agents';

/** A JSON object schema as `tool()` takes it, strict or not (the SDK does not export these types by name). */
type JsonParameters = Parameters<typeof tool>[0]['parameters'];
type StrictParameters = Extract<JsonParameters, { additionalProperties: false }>;
type NonStrictParameters = Extract<JsonParameters, { additionalProperties: true }>;

export interface AgentsToolsOptions extends AptixToolsOptions {
  /**
   * The Agents SDK's own time-out for each call (its tool `timeoutMs`): the run's signal then stops the
   * tool, and the model reads a `TIMEOUT` failure. The tool's own `TimeoutMs` (or `defaultTimeoutMs`)
   * applies either way.
   */
  readonly timeoutMs?: number;
}

/** Aptix tools as Agents SDK function tools, and the guidance for the agent's instructions. */
export interface AptixAgentsTools {
  /** Every tool, for `new Agent({ tools })`. With a session, each is enabled only while its mode offers it. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly tools: FunctionTool<any, any, any>[];
  /** The `<tool_guidance>` fragment for the tools offered now; call it from `instructions` to follow mode changes. */
  guidance(): Promise<string>;
  /** The packages' prompts as run input items, and their resources through the SDK's MCP resource methods. */
  readonly units: AgentsUnits;
  /** The adapter underneath: the registry, the executor and `call`. */
  readonly aptix: AptixTools;
}

/** What the model reads when something other than a tool's result went wrong; never an exception's details. */
const UNEXPECTED = failureText(
  InvokeResult.fromError('The tool call failed before the tool could answer.', ExecutionErrorCode.TOOL_EXCEPTION),
);

/**
 * Turns Aptix tool classes and packages into Agents SDK function tools (`tool()` with a JSON schema).
 * `strict` comes from Aptix's strict-mode report (with the strict view of the parameters); Aptix's
 * executor validates the arguments. A failed call reaches the model as `{"error":{"message","code"}}`
 * through the tool's `errorFunction`, and the run goes on. The run's signal stops the tool.
 *
 * With a session, each tool's `isEnabled` asks the session's current mode, so the turn after an
 * `agent_change_mode` sees the new mode's tools.
 *
 * @example
 * const aptix = await createAgentsTools({ tools: [samples] });
 * const agent = new Agent({ name: 'Assistant', instructions: async () => `Be brief.\n\n${await aptix.guidance()}`, tools: aptix.tools, model });
 * const result = await run(agent, 'What is 6 times 7?');
 */
export async function createAgentsTools(options: AgentsToolsOptions): Promise<AptixAgentsTools> {
  const aptix = await createAptixTools(options);
  const scoped = aptix.session !== undefined;
  const tools = aptix.names().map((name) => {
    const { description, parameters, strict } = aptix.describe(name, true);
    const common = {
      name,
      description,
      execute: async (input: unknown, _context?: unknown, details?: { signal?: AbortSignal }) => {
        // A JSON-schema tool gets the model's arguments as parsed JSON; Aptix's executor checks them.
        // A gated call reaches here only once a person approved it through the SDK's needsApproval.
        const result = await aptix.call(name, input, { signal: details?.signal, approved: true });
        if (!result.successful) throw new AptixToolError(name, result);
        return agentsToolOutput(result);
      },
      errorFunction: (_context: unknown, error: unknown) =>
        error instanceof AptixToolError ? error.message : UNEXPECTED,
      // The tool's ApprovalPolicy as the SDK's own approval step: the run stops with an interruption to approve or reject.
      ...(aptix.mayNeedApproval(name)
        ? {
            needsApproval: async (_context: unknown, input: unknown) => (await aptix.approvalFor(name, input)).required,
          }
        : {}),
      ...(scoped ? { isEnabled: async () => (await aptix.offeredToolNames()).includes(name) } : {}),
      ...(options.timeoutMs === undefined
        ? {}
        : {
            timeoutMs: options.timeoutMs,
            timeoutErrorFunction: () =>
              failureText(
                InvokeResult.fromError(
                  `${name} did not finish within ${options.timeoutMs} ms and was stopped. Try a smaller request, or allow more time.`,
                  ExecutionErrorCode.TIMEOUT,
                ),
              ),
          }),
    };
    // The runtime takes any JSON object schema: the types only tell strict and non-strict apart.
    return strict
      ? tool({ ...common, parameters: parameters as unknown as StrictParameters, strict: true })
      : tool({ ...common, parameters: parameters as unknown as NonStrictParameters, strict: false });
  });
  return { tools, guidance: () => aptix.guidance(), units: agentsUnits(aptix.units), aptix };
}
