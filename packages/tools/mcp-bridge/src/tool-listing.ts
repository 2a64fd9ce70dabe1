import {
  SdkError,
  SdkErrorCode,
  specTypeSchemas,
  type Client,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/client';

/** Marks a listed tool the SDK's Tool schema refuses; the bridge skips it with the reason (see {@link invalidDefinition}). */
const INVALID = Symbol('aptix.mcpBridge.invalidTool');

/** A tool the server listed that is no valid MCP tool, named and carried so the bridge can skip it like any unusable tool. */
type InvalidTool = Tool & { readonly [INVALID]: string };

/** Why a listed tool is no valid MCP tool definition, or undefined for a valid one. */
export function invalidDefinition(tool: Tool): string | undefined {
  return (tool as Partial<InvalidTool>)[INVALID];
}

/** Takes a tools/list result as it is: each tool is checked on its own below. */
const ANY_RESULT: StandardSchemaV1<unknown, { tools?: unknown; nextCursor?: unknown }> = {
  '~standard': {
    version: 1,
    vendor: 'aptix-mcp-bridge',
    validate: (value) => ({ value: value as { tools?: unknown; nextCursor?: unknown } }),
  },
};
const MAX_PAGES = 64;
type ListOptions = NonNullable<Parameters<Client['listTools']>[1]>;

/**
 * Lists a server's tools. The SDK refuses a whole tools/list result when one of its tools is not a
 * valid MCP tool (an inputSchema that is not an object schema, or none): one bad tool would then fail
 * the bridge's start-up, whatever its `invalidTools` says. So after such a refusal the tools are read
 * again, page by page, and checked one by one against the SDK's own Tool schema: the valid ones are
 * kept, and each other one is returned marked with why ({@link invalidDefinition}), so the bridge skips
 * it (or fails, with `invalidTools: "fail"`) naming it. A result that is not a tool list at all still fails.
 */
export async function listTools(client: Client, options: ListOptions): Promise<Tool[]> {
  try {
    return (await client.listTools(undefined, options)).tools;
  } catch (error) {
    if (!(error instanceof SdkError) || error.code !== SdkErrorCode.InvalidResult) throw error;
    return listEachTool(client, options, error);
  }
}

async function listEachTool(client: Client, options: ListOptions, refusal: SdkError): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request(
      { method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) },
      ANY_RESULT,
      { timeout: options.timeout },
    );
    if (!Array.isArray(result.tools)) throw refusal;
    for (const raw of result.tools as unknown[]) {
      const checked = specTypeSchemas.Tool['~standard'].validate(raw);
      if (checked instanceof Promise) throw refusal; // the SDK's schemas are synchronous; anything else is not understood here
      if (checked.issues === undefined) tools.push(checked.value as Tool);
      else tools.push(invalidTool(raw, checked.issues));
    }
    if (typeof result.nextCursor !== 'string' || result.nextCursor === cursor) break;
    cursor = result.nextCursor;
  }
  return tools;
}

/** A refused tool as the bridge sees it: its name (when it has one to give) and what the schema said. */
function invalidTool(raw: unknown, issues: ReadonlyArray<StandardSchemaV1.Issue>): Tool {
  const record = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const name = typeof record.name === 'string' && record.name !== '' ? record.name : '(a tool without a name)';
  const problems = issues.slice(0, 5).map((issue) => {
    const path = (issue.path ?? [])
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- checked at run time: JavaScript callers, tool packages and parsed input can bring what the type rules out
      .map((part) => String(typeof part === 'object' && part !== null && 'key' in part ? part.key : part))
      .join('.');
    return `${path === '' ? 'the tool' : path}: ${issue.message}`;
  });
  const why = `its definition is not a valid MCP tool (${problems.join('; ')})${/inputSchema/.test(problems.join(' ')) ? '; an inputSchema must be a JSON Schema object with "type": "object"' : ''}`;
  return { name, inputSchema: { type: 'object' }, [INVALID]: why } as InvalidTool;
}
