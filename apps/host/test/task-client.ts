/** A raw 2026-07-28 client of the tasks extension, for the MCP task tests. */

/** The API keys the task tests' hosts take (APTIX_API_KEYS `ops=KEY,auditor=OTHER`). */
export const KEY = 'ops-key-0123456789abcdef';
export const OTHER = 'auditor-key-0123456789abcdef';
/** The client capabilities that declare the tasks extension. */
export const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

export type RpcAnswer = { result?: any; error?: { code: number; message: string; data?: any } };

/** One JSON-RPC request over HTTP, as a 2026-07-28 client sends it (JSON or SSE answer). */
export async function taskRpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = TASKS,
  key = KEY,
  path = '/mcp/modes/tool_diagnostics',
): Promise<RpcAnswer> {
  const name = String(params.name ?? params.taskId ?? '');
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  return text.startsWith('{')
    ? JSON.parse(text)
    : JSON.parse(
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5))
          .pop()!,
      );
}

/** Polls tasks/get through `call` until the task is no longer working or parked (at most `polls` polls, 50 ms apart). */
export async function settledVia(
  call: (method: string, params: Record<string, unknown>) => Promise<RpcAnswer>,
  taskId: string,
  polls = 100,
): Promise<any> {
  for (let attempt = 0; attempt < polls; attempt++) {
    const { result, error } = await call('tasks/get', { taskId });
    if (error !== undefined) throw new Error(`tasks/get ${taskId}: ${error.message}`);
    if (!['working', 'input_required'].includes(result.status)) return result;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${taskId} never settled`);
}
