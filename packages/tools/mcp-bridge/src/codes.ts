/**
 * The codes the bridge puts on failed results, kept in one place. Codes are API: callers and models
 * branch on them, so a code is never renamed or reused. The executor's own codes (TIMEOUT,
 * INVALID_ARGUMENTS, …) still apply to bridged tools.
 */
export const BridgeErrorCode = {
  /** The remote tool ran and reported a failure (`isError: true`); the message is the server's. */
  REMOTE_TOOL_ERROR: 'REMOTE_TOOL_ERROR',
  /** The server refused the call with a JSON-RPC error (unknown tool, invalid params…); the message is the server's. */
  REMOTE_PROTOCOL_ERROR: 'REMOTE_PROTOCOL_ERROR',
  /** The server cannot be reached (not connected, reconnecting, or the connection dropped during the call). */
  REMOTE_UNAVAILABLE: 'REMOTE_UNAVAILABLE',
  /** The server no longer offers this tool (it was removed from its tool list after start-up). */
  REMOTE_TOOL_GONE: 'REMOTE_TOOL_GONE',
  /** The server changed this tool's input schema and the new schema failed the bridge's checks. */
  REMOTE_SCHEMA_REJECTED: 'REMOTE_SCHEMA_REJECTED',
  /**
   * The server answered with something that is not a valid tool result, or with content blocks no caller
   * can be sent (bad base64, an image whose media type is not image/*, more than 256 blocks). The tool ran.
   */
  REMOTE_MALFORMED_RESULT: 'REMOTE_MALFORMED_RESULT',
} as const;
export type BridgeErrorCode = (typeof BridgeErrorCode)[keyof typeof BridgeErrorCode];

/** What each code means to a model, for the generated usage guides (every code is listed). */
export const BRIDGE_ERROR_MEANINGS: { readonly [code in BridgeErrorCode]: string } = {
  REMOTE_TOOL_ERROR:
    "the remote tool ran and reported a failure; the message is the MCP server's own. Fix the arguments it names, or tell the user.",
  REMOTE_PROTOCOL_ERROR:
    "the MCP server refused the call (for example arguments it does not accept); the message is the server's own.",
  REMOTE_UNAVAILABLE:
    'the MCP server cannot be reached right now; the host reconnects by itself. Try again later; if the connection dropped during a call, whether it took effect is unknown.',
  REMOTE_TOOL_GONE: 'the MCP server no longer offers this tool. Do not call it again.',
  REMOTE_SCHEMA_REJECTED:
    "the MCP server changed this tool's arguments in a way the host cannot check. Do not call it again until the host is restarted.",
  REMOTE_MALFORMED_RESULT:
    'the MCP server answered with something that is not a valid tool result, or with content ' +
    'that cannot be passed on (the message names the block and the rule). The tool did run on ' +
    'the server: do not assume it changed nothing. Tell the user; calling again will likely get ' +
    'the same answer.',
};

/** Start-up failures of a bridge: bad options, an unreachable server. The message names the server and the fix. */
export class McpBridgeError extends Error {
  override readonly name = 'McpBridgeError';
}
