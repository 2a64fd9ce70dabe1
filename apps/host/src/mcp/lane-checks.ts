import { classifyInboundRequest, specTypeSchemas, type CallToolResult } from '@modelcontextprotocol/server';

/**
 * The fast lane's checks of what a client sends and what the lane answers, each equal to the SDK's own
 * check for the subset of messages the lane takes (lane-checks.test.ts holds each against the SDK's
 * schemas with odd and hostile values). The SDK's checks are zod parses: each copies the message it
 * checks, and those copies were a tenth of what a call allocated.
 */

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The SDK's `isJSONRPCRequest` for a message in the lane's subset, without its parse. The SDK's schema
 * is a strict object of `jsonrpc` ("2.0"), `id` (a string or an integer), `method` (a string) and
 * `params` (an object whose `_meta` is a request meta): the lane has checked the keys (no others), the
 * method, and `params` is then checked with {@link isCallToolParams} or the SDK's list schema. An
 * integer past 2^53 is left to the SDK.
 */
export function isJsonRpcRequest(body: Record<string, unknown>): boolean {
  const id = body.id;
  return body.jsonrpc === '2.0' && (typeof id === 'string' || Number.isSafeInteger(id));
}

/**
 * The SDK's `CallToolRequest` schema (`isSpecType.CallToolRequest`) on the params of a message the lane
 * takes: an object with no keys but `name`, `arguments` and `_meta`, whose `_meta` holds no key but
 * `progressToken` and the 2026-07-28 envelope's (fast-lane.ts checked both, and that the method is
 * `tools/call`). What the schema checks of those: `name` a string; `arguments`, when present, a record
 * (an object that is neither null nor an array; from JSON every key is a string); `_meta`, when present,
 * an object whose `progressToken` is absent, a string or a safe integer. The envelope's own keys are
 * loose in this schema (the classifier judges them: {@link validEnvelope}).
 */
export function isCallToolParams(params: Record<string, unknown>): boolean {
  if (typeof params.name !== 'string') return false;
  const args = params.arguments;
  if (args !== undefined && !isPlainObject(args)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || Number.isSafeInteger(token);
}

/** Envelopes the classifier judged, with its verdict, newest last; see {@link validEnvelope}. */
const verdicts: Array<{ readonly method: string; readonly envelope: unknown; readonly valid: boolean }> = [];
const MAX_VERDICTS = 16;
/** Envelopes with more values than this are judged afresh each time rather than kept. */
const MAX_VERDICT_NODES = 256;
const MODERN_REVISION = '2026-07-28';

/** The classifier's verdict on a request of `method` carrying only this `_meta`. */
function classify(method: 'tools/call' | 'tools/list', meta: Record<string, unknown>): boolean {
  const body = { jsonrpc: '2.0', id: 0, method, params: { _meta: meta } };
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    body,
    protocolVersionHeader: MODERN_REVISION,
    mcpMethodHeader: method,
  });
  return (
    outcome.kind === 'modern' &&
    outcome.messageKind === 'request' &&
    outcome.classification.revision === MODERN_REVISION
  );
}

/**
 * Whether two JSON values are the same value (what JSON.stringify would write alike, up to the order
 * of keys), looking at `budget.left` values at most: false once it runs out. No allocation.
 */
export function sameJson(a: unknown, b: unknown, budget: { left: number }): boolean {
  if (--budget.left < 0) return false;
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], budget)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let keys = 0;
  for (const key in a) {
    if (
      !Object.hasOwn(b, key) ||
      !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], budget)
    )
      return false;
    keys += 1;
  }
  for (const _ in b) keys -= 1;
  return keys === 0;
}

/**
 * Whether the SDK's own classifier takes a request in the lane's subset for a 2026-07-28 request. The
 * lane has checked the rest of what the classifier checks: the headers (exact values, which the
 * classifier would only trim), the envelope claim, the method, that the message is a JSON-RPC request
 * and carries neither `result` nor `error` (so the classifier's two response parses, which fail and
 * are its dearest part, cannot match). What is left is the envelope's validity, a function of `_meta`
 * alone: the classifier judges it on a request carrying only that `_meta`, and since clients send
 * the same envelope with every call, its verdict is kept with a copy of the envelope, and an envelope
 * that is the same JSON value gets the same verdict (compared in place: serializing every envelope to
 * key a map cost a call about a microsecond). A progress token differs per call: then the whole
 * request is classified, as is an envelope of more than {@link MAX_VERDICT_NODES} values.
 */
export function validEnvelope(method: 'tools/call' | 'tools/list', meta: Record<string, unknown>): boolean {
  if ('progressToken' in meta) return classify(method, meta);
  const budget = { left: 0 };
  for (let i = verdicts.length - 1; i >= 0; i--) {
    const kept = verdicts[i]!;
    budget.left = MAX_VERDICT_NODES;
    if (kept.method === method && sameJson(meta, kept.envelope, budget)) return kept.valid;
  }
  const valid = classify(method, meta);
  // Kept only when small enough to compare in full; a copy, so nothing the request holds can change it.
  if (fits(meta, { left: MAX_VERDICT_NODES })) {
    if (verdicts.length >= MAX_VERDICTS) verdicts.shift();
    verdicts.push({ method, envelope: structuredClone(meta), valid });
  }
  return valid;
}

/** Whether a JSON value holds at most `budget.left` values. */
function fits(value: unknown, budget: { left: number }): boolean {
  if (--budget.left < 0) return false;
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every((item) => fits(item, budget));
  for (const key in value) if (!fits((value as Record<string, unknown>)[key], budget)) return false;
  return true;
}

/** A text block as the SDK's schema keeps it: exactly `type` and `text`. */
function isPlainTextBlock(block: unknown): boolean {
  if (!isPlainObject(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
  let keys = 0;
  for (const _ in block) keys += 1;
  return keys === 2;
}

/**
 * A tool result checked against the SDK's `CallToolResult` schema, as the SDK's parse gives it back
 * (its keys in the schema's order), or the schema's issues. The common result (only `content` of
 * plain text blocks, and `isError`) is checked here: the parse would copy it unchanged. Anything else
 * (other blocks, `structuredContent`, `_meta`, other keys) goes through the SDK's parse.
 */
export function checkedCallResult(
  result: CallToolResult,
): { value: Record<string, unknown> } | { issues: readonly { message: string }[] } {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
  const content = result.content === undefined ? [] : result.content;
  let plain = Array.isArray(content);
  for (const key in result) if (key !== 'content' && key !== 'isError') plain = false;
  if (plain && result.isError !== undefined && typeof result.isError !== 'boolean') plain = false;
  if (plain) for (let i = 0; i < content.length && plain; i++) plain = isPlainTextBlock(content[i]);
  if (plain) return { value: result.isError === undefined ? { content } : { content, isError: result.isError } };
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
    result.content === undefined ? { ...result, content: [] } : result,
  );
  if (checked.issues !== undefined) return { issues: checked.issues };
  return { value: checked.value as unknown as Record<string, unknown> };
}
