import { ProtocolError, ProtocolErrorCode, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { UnitErrorCode, type ToolInputChannel, type UnitOutcome } from '@aptix/tool-contract';
import type { AptixHost } from '../aptix-host.js';
import type { HostUnits, UnitScope } from '../units/host-units.js';
import { openState, type ModernCall } from './approval-elicitation.js';
import type { McpScope } from './mcp-scope.js';
import {
  askForInput,
  askLegacyRounds,
  canBeAsked,
  clientAnswers,
  declaredCapabilities,
  inputChannel,
  isToolState,
  legacyFirstInput,
  missingCapability,
} from './tool-input.js';

type Rendered = Awaited<ReturnType<HostUnits['render']>>;

/**
 * `prompts/get` for a prompt whose `render` may ask the client first (`InvokeResult.inputRequired`), as
 * a tool asks: on 2026-07-28 the answer is `input_required` with a `requestState` sealed to this
 * request (the prompt, its arguments, the API key, the agent session), and the retry renders with the
 * answers; on a 2025 session the host sends each request to a client that declared it and renders
 * again. Answers the rendered outcome, or (`ask`) the `input_required` result to send as it is.
 */
export async function getPrompt(
  host: AptixHost,
  units: HostUnits,
  scope: McpScope,
  server: Server,
  params: { name: string; arguments?: Record<string, string> },
  seen: UnitScope,
  ctx: ServerContext,
): Promise<Rendered | { readonly ask: Record<string, unknown> }> {
  const args = params.arguments ?? {};
  const render = (input: ToolInputChannel | undefined) =>
    units.render(params.name, args, seen, ctx.mcpReq.signal, input);
  if (scope.era === 'modern') {
    const call: ModernCall = {
      name: `prompt ${params.name}`,
      args,
      actor: scope.actor,
      agentSessionId: scope.agentSessionId,
      log: scope.log,
    };
    const raw = ctx.mcpReq.requestState<unknown>();
    const state = typeof raw === 'string' ? await openState(host, raw, ctx) : undefined;
    if (state !== undefined && !isToolState(state))
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Invalid requestState: prompt ${params.name} did not ask for it. Get the prompt again without requestState.`,
        { reason: 'invalid_request_state' },
      );
    const outcome = await render(inputChannel(ctx, state, call));
    if (!outcome.ok && outcome.inputRequired !== undefined)
      return { ask: (await askForInput(host, outcome.inputRequired, call)) as unknown as Record<string, unknown> };
    if (!outcome.ok) {
      // Needing a capability the request did not declare (sampling, roots) is the protocol's -32021.
      const missing = missingCapability(
        { successful: false, result: null, errors: [{ message: outcome.message, code: outcome.code }] },
        declaredCapabilities(ctx),
      );
      if (missing !== undefined) throw missing;
    }
    return outcome;
  }
  const capabilities = scope.clientCapabilities ?? server.getClientCapabilities();
  if (!canBeAsked(capabilities)) return render(undefined);
  const rounds = await askLegacyRounds(
    await render(legacyFirstInput(capabilities)),
    (outcome: Rendered) => (outcome.ok ? undefined : outcome.inputRequired),
    render,
    {
      answers: clientAnswers(capabilities),
      signal: scope.cancel ? AbortSignal.any([ctx.mcpReq.signal, scope.cancel]) : ctx.mcpReq.signal,
      hold: () => scope.questions?.hold(server) ?? true,
      release: () => scope.questions?.release(server),
    },
    ctx,
  );
  if (rounds.kind === 'done') return rounds.outcome;
  const text = (rounds.result.content as Array<{ text?: string }>).map((block) => block.text ?? '').join(' ');
  return { ok: false, code: UnitErrorCode.INPUT_REQUIRED, message: text } satisfies UnitOutcome<never>;
}
