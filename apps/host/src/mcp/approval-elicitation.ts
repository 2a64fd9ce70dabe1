import { createHash, randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { canonicalJson, type LevelLogger } from '@aptix/tool-contract';
import type { ToolApproval } from '@aptix/agent-sessions';
import type { DecisionOutcome } from '../approvals/approval-gate.js';
import type { AptixHost } from '../aptix-host.js';
import { declinedResult, type PresentedResult } from '../approvals/approval-gate.js';
import { pendingApprovalMessage } from '../approvals/present.js';
import { checkedInputResponses } from './input-responses.js';
import { callToolResult } from './tool-result.js';

/**
 * Asking the MCP client's user to decide an approval, instead of only answering that the call waits:
 *
 * - 2026-07-28: the call answers `input_required` with a form elicitation and a `requestState`
 *   sealed with the SDK's HMAC codec; the client retries with the user's answer and the state.
 * - 2025 revisions: the host sends `elicitation/create` on the call's own stream and waits.
 *
 * The answer decides the stored approval exactly like `POST /v1/approvals/:id` (the same conditional
 * update, so one execution across hosts), recorded as decided by the API key's name "via MCP elicitation".
 */

/** The key of the one input request an approval asks for. */
export const APPROVAL_INPUT_KEY = 'approval';
const MAX_NOTE = 2000;

/** The call a sealed `requestState` was minted for; the HMAC makes every field trustworthy. */
export interface CallBinding {
  /** The tool, the caller (API key name) and the agent session. */
  readonly t: string;
  readonly by: string | null;
  readonly s: string | null;
  /** SHA-256 of the canonical arguments. */
  readonly h: string;
}

/** What the sealed `requestState` of an approval round carries. */
interface ApprovalState extends CallBinding {
  readonly k: 'approval';
  /** The approval asked about. */
  readonly a: string;
}

export function bindingOf(call: ModernCall): CallBinding {
  return { t: call.name, by: call.actor ?? null, s: call.agentSessionId ?? null, h: argumentsHash(call.args) };
}

/** Refuses a state minted for another call: tool, API key, agent session or arguments. */
export function checkBinding(state: CallBinding, call: ModernCall): void {
  const mismatch =
    state.t !== call.name
      ? `it was issued for tool ${state.t}, not ${call.name}`
      : state.by !== (call.actor ?? null)
        ? 'it was issued to another API key'
        : state.s !== (call.agentSessionId ?? null)
          ? 'it was issued for another agent session'
          : state.h !== argumentsHash(call.args)
            ? 'the arguments differ from those of the call that asked'
            : undefined;
  if (mismatch !== undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid requestState for this call: ${mismatch}. Retry with exactly the original request, or call the tool again without requestState.`,
      { reason: 'invalid_request_state' },
    );
}

const codecs = new WeakMap<AptixHost, RequestStateCodec<unknown>>();

/**
 * The host's `requestState` codec: HMAC-SHA256 under `mcp.requestStateKey` (`APTIX_MCP_STATE_KEY`), or a
 * key drawn for this process when none is configured (then a state only verifies on the host that
 * minted it; several hosts behind one URL must share a configured key).
 */
export function requestStateCodec(host: AptixHost): RequestStateCodec<unknown> {
  let codec = codecs.get(host);
  if (codec === undefined) {
    const { requestStateKey } = host.cradle.config.mcp;
    codec = createRequestStateCodec({
      key: requestStateKey ?? randomBytes(32),
      ttlSeconds: Math.max(1, Math.ceil(host.cradle.config.approvalTtlMs / 1000)),
    });
    codecs.set(host, codec);
  }
  return codec;
}

/** Who decided, as the approval records it: the API key's name, and the channel. */
export function elicitationActor(actor: string | undefined): string {
  return `${actor ?? 'an unauthenticated MCP client'} via MCP elicitation`;
}

function argumentsHash(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('base64url');
}

function argumentsText(approval: ToolApproval): string {
  return approval.arguments.length > 1500
    ? `${approval.arguments.slice(0, 1500)}… (${approval.arguments.length} characters)`
    : approval.arguments;
}

/** The form the user answers: approve or deny, with an optional note. The message gives the reason and the arguments. */
export function approvalElicitation(approval: ToolApproval): ElicitRequestFormParams {
  return {
    mode: 'form',
    message:
      `Approve this call to ${approval.toolName}? ${approval.reason}\nArguments: ` +
      `${argumentsText(approval)}\nIt runs once, with exactly these arguments, if you approve ` +
      `(approval ${approval.id}, open until ${approval.expiresAt}).`,
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: 'approve runs the call once; deny records that it must not run.',
          enum: ['approve', 'deny'],
        },
        note: {
          type: 'string',
          title: 'Note',
          description: 'Why (optional); a denial passes it on to the model.',
          maxLength: MAX_NOTE,
        },
      },
      required: ['decision'],
    },
  };
}

/** Whether the client declared form elicitation (a bare `elicitation: {}` counts as form). */
export function canElicitForm(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as { form?: unknown; url?: unknown } | undefined;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (elicitation === undefined || elicitation === null || typeof elicitation !== 'object') return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** The user's answer to the form: a decision, the dismissal of the form, or nothing usable (ask again). */
export type ApprovalAnswer =
  | { readonly kind: 'decision'; readonly decision: 'approve' | 'deny'; readonly note: string | null }
  | { readonly kind: 'dismissed' }
  | { readonly kind: 'unusable' };

/** Reads an elicitation result: accept with a valid decision, decline (a denial), cancel (no decision). */
export function readAnswer(response: { action?: unknown; content?: unknown } | undefined): ApprovalAnswer {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (response === undefined || response === null || typeof response !== 'object') return { kind: 'unusable' };
  if (response.action === 'cancel') return { kind: 'dismissed' };
  if (response.action === 'decline') return { kind: 'decision', decision: 'deny', note: 'Declined in the MCP client.' };
  if (response.action !== 'accept' || typeof response.content !== 'object' || response.content === null)
    return { kind: 'unusable' };
  const { decision, note } = response.content as { decision?: unknown; note?: unknown };
  if (decision !== 'approve' && decision !== 'deny') return { kind: 'unusable' };
  if (note !== undefined && (typeof note !== 'string' || note.length > MAX_NOTE)) return { kind: 'unusable' };
  return { kind: 'decision', decision, note: typeof note === 'string' && note.trim() !== '' ? note : null };
}

function approvalMeta(approval: ToolApproval): Record<string, unknown> {
  return { 'aptix/approval': { status: approval.status, approvalId: approval.id, decidedBy: approval.decidedBy } };
}

/** The answer a client gets for a call that still waits: nothing ran, and where to decide. */
export function pendingResult(approval: ToolApproval, why?: string): CallToolResult {
  return {
    content: [{ type: 'text', text: `${why === undefined ? '' : `${why} `}${pendingApprovalMessage(approval)}` }],
    _meta: { 'aptix/approval': { status: 'pending_approval', approvalId: approval.id } },
  };
}

function failed(approval: ToolApproval, result: PresentedResult): CallToolResult {
  return {
    content: [
      {
        type: 'text',
        text:
          result.errors.map((error) => error.message).join(' ') || `${approval.toolName} failed without saying why.`,
      },
    ],
    isError: true,
    _meta: approvalMeta(approval),
  };
}

/** The call's result once the person decided: the approved call's stored result, or the denial. */
export function decidedResult(outcome: DecisionOutcome, replay: boolean, host: AptixHost): CallToolResult {
  // The principal may not decide it (separation of duties, or no approve permission): nothing changed, and the call still waits.
  if (outcome.kind === 'forbidden')
    return {
      content: [{ type: 'text', text: `${outcome.message} Nothing was decided; the call still waits.` }],
      isError: true,
    };
  if (outcome.kind === 'not_found')
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'The approval this answer is for no longer exists; nothing ran. Call the tool again to ask anew.',
    );
  const { approval } = outcome;
  if (outcome.kind === 'already_decided' && replay) {
    // A requestState is good for one decision: a second use changes nothing and says so.
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `This requestState was already used: approval ${approval.id} was ` +
        `decided${approval.decidedBy ? ` by ${approval.decidedBy}` : ''}${approval.decidedAt ? ` at ${approval.decidedAt}` : ''} ` +
        `and is now "${approval.status}". Nothing ran again; its result is at GET ` +
        `/v1/approvals/${approval.id}.`,
    );
  }
  if (outcome.kind === 'expired') return failed(approval, declinedResult(approval));
  if (approval.status === 'denied' || approval.status === 'expired') return failed(approval, declinedResult(approval));
  const result = approval.result as PresentedResult | null;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  if (result === null || result === undefined) {
    // Decided elsewhere and not run yet (claimed by another host): say so, never claim an outcome.
    return {
      content: [
        {
          type: 'text',
          text: `Approval ${approval.id} is "${approval.status}": the call runs once, on the host that claimed it. Its result will be at GET /v1/approvals/${approval.id}.`,
        },
      ],
      _meta: approvalMeta(approval),
    };
  }
  if (!result.successful) return failed(approval, result);
  // As an ungated call answers: the tool's content blocks, and structuredContent for a tool with an output schema.
  const success = {
    successful: true as const,
    result: JSON.stringify(result.result),
    errors: [],
    ...(result.content === undefined ? {} : { content: result.content }),
  };
  return { ...callToolResult(success, host.declaresOutputSchema(approval.toolName)), _meta: approvalMeta(approval) };
}

/** What the 2026-07-28 path needs from the call in progress. */
export interface ModernCall {
  readonly name: string;
  readonly args: unknown;
  readonly actor: string | undefined;
  readonly agentSessionId: string | undefined;
  readonly log: LevelLogger | undefined;
}

/** Round one on 2026-07-28: the call waits for a person, so ask the client's user (when it can be asked). */
export async function askModern(
  host: AptixHost,
  approval: ToolApproval,
  call: ModernCall,
  ctx: ServerContext,
): Promise<CallToolResult | undefined> {
  const capabilities = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    ClientCapabilities | undefined;
  if (!canElicitForm(capabilities)) return undefined;
  const state: ApprovalState = { k: 'approval', a: approval.id, ...bindingOf(call) };
  const requestState = await requestStateCodec(host).mint(state);
  return {
    ...inputRequired({
      inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicit(approvalElicitation(approval)) },
      requestState,
    }),
    _meta: { 'aptix/approval': { status: 'pending_approval', approvalId: approval.id } },
  } as unknown as CallToolResult;
}

const STATE_REFUSALS: Record<string, string> = {
  expired: 'The requestState has expired. Call the tool again (without requestState) to ask anew.',
  mac:
    'The requestState failed its integrity check: it was altered, or minted under another key ' +
    '(every host behind one URL needs the same mcp.requestStateKey). Send back the requestState ' +
    'exactly as received, or call the tool again without one.',
  malformed:
    'The requestState is not one this host minted. Send back the requestState exactly as received, or call the tool again without one.',
};

/** Verifies an echoed `requestState` with the codec; refuses what fails with a message naming why. */
export async function openState(host: AptixHost, raw: string, ctx: ServerContext): Promise<unknown> {
  try {
    return await requestStateCodec(host).verify(raw, ctx);
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'malformed';
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid requestState: ${STATE_REFUSALS[reason] ?? STATE_REFUSALS.malformed}`,
      { reason: 'invalid_request_state' },
    );
  }
}

/** Whether a verified state is an approval round's. */
export function isApprovalState(state: unknown): state is ApprovalState {
  return (
    typeof state === 'object' &&
    state !== null &&
    (state as { k?: unknown }).k === 'approval' &&
    typeof (state as { a?: unknown }).a === 'string'
  );
}

/**
 * Round two on 2026-07-28: the client retried with the user's answer and the verified state. The
 * state must be for this call (tool, caller, agent session, arguments); a usable answer decides the
 * approval once, anything else asks again with the same state.
 */
export async function resumeModern(
  host: AptixHost,
  state: ApprovalState,
  rawState: string,
  call: ModernCall,
  ctx: ServerContext,
): Promise<CallToolResult> {
  checkBinding(state, call);
  const gate = host.approvals();
  const approval = await gate.store.get(state.a);
  if (approval === undefined) return decidedResult({ kind: 'not_found' }, true, host);
  const view = inputResponse(checkedInputResponses(ctx), APPROVAL_INPUT_KEY);
  const answer =
    view.kind === 'elicit'
      ? readAnswer({ action: view.action, content: view.content })
      : ({ kind: 'unusable' } as const);
  if (answer.kind === 'dismissed') {
    if (approval.status !== 'pending') return decidedResult({ kind: 'already_decided', approval }, true, host);
    return pendingResult(approval, 'The approval form was dismissed, so nothing was decided.');
  }
  if (answer.kind === 'unusable') {
    if (approval.status !== 'pending') return decidedResult({ kind: 'already_decided', approval }, true, host);
    // Missing, malformed or of another kind: ask again, with the same sealed state.
    return {
      ...inputRequired({
        inputRequests: { [APPROVAL_INPUT_KEY]: inputRequired.elicit(approvalElicitation(approval)) },
        requestState: rawState,
      }),
      _meta: { 'aptix/approval': { status: 'pending_approval', approvalId: approval.id } },
    } as unknown as CallToolResult;
  }
  const outcome = await gate.decide(
    approval.id,
    answer.decision,
    elicitationActor(call.actor),
    answer.note,
    call.log,
    call.actor,
  );
  return decidedResult(outcome, true, host);
}

/** What the 2025 path needs: the client's declared capabilities, and a way to send it a request on this call's stream. */
export interface LegacyAsk {
  readonly capabilities: ClientCapabilities | undefined;
  readonly actor: string | undefined;
  readonly log: LevelLogger | undefined;
  readonly signal: AbortSignal;
  /** Claims the session's one channel for a server-to-client request; false when another call holds it. */
  hold(): boolean;
  release(): void;
}

/**
 * 2025 revisions: asks the user with `elicitation/create` on the call's stream and decides with the
 * answer. Without the capability, with another question open in the session, or when the client does
 * not answer (time-out, closed stream), the call answers that it waits, as before.
 */
export async function askLegacy(
  host: AptixHost,
  approval: ToolApproval,
  ask: LegacyAsk,
  ctx: ServerContext,
): Promise<CallToolResult> {
  if (!canElicitForm(ask.capabilities)) return pendingResult(approval);
  if (!ask.hold())
    return pendingResult(
      approval,
      'Another question to the user is open in this MCP session, so this one was not asked.',
    );
  let answer: ApprovalAnswer;
  try {
    const timeout = Math.max(1000, Math.min(Date.parse(approval.expiresAt) - Date.now(), 600_000));
    const response = await ctx.mcpReq.send(
      { method: 'elicitation/create', params: approvalElicitation(approval) as unknown as Record<string, unknown> },
      { timeout, signal: ask.signal },
    );
    answer = readAnswer(response as { action?: unknown; content?: unknown });
  } catch (error) {
    ask.log?.info(
      { approvalId: approval.id, err: error },
      `approval ${approval.id}: the MCP client did not answer the approval question`,
    );
    return pendingResult(approval, 'The MCP client did not answer the approval question.');
  } finally {
    ask.release();
  }
  if (answer.kind === 'dismissed')
    return pendingResult(approval, 'The approval form was dismissed, so nothing was decided.');
  if (answer.kind === 'unusable')
    return pendingResult(approval, 'The answer to the approval question was not a decision (approve or deny).');
  const outcome = await host
    .approvals()
    .decide(approval.id, answer.decision, elicitationActor(ask.actor), answer.note, ask.log, ask.actor);
  return decidedResult(outcome, false, host);
}
