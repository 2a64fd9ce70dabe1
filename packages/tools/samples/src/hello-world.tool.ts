import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type DecodedArguments,
  type ToolDependencies,
} from '@aptix/tool-contract';

const Args = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'Name of the person to greet, as they gave it.' }),
  },
  { additionalProperties: false },
);

/** The canonical minimal tool (TUL-011 §6): greets the user by name. */
export class HelloWorldTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'agent_hello_world';
  static readonly ToolUsageMetadata = usage`
    agent_hello_world — Usage Guide

    Primary purpose:
    - Create a personalised greeting when the user asks to be greeted or welcomed.

    Rules:
    - Call it once per greeting request.
    - Do not call it without the user's name; ask for the name first.
    - Do not call it for anything other than a greeting.

    Arguments:
    - name (required): the user's name as they gave it; a non-empty string.

    Error codes:
    - INVALID_ARGUMENTS: 'name' is missing, empty, only whitespace, or not a string.
    - TOOL_EXCEPTION: the tool failed unexpectedly; nothing was done. Tell the user; do not retry more than once.
    - TIMEOUT: the host stopped the call at its time-out before it finished; nothing was done.
    - A successful result with "wasCancelled": true: the caller cancelled the call before it ran; nothing was done.

    Good usage:
    - The user says "Hi, I'm Ada, say hello!" → { "name": "Ada" }

    Bad usage:
    - {}, { "name": "" } or { "name": "   " }: a greeting needs a name.
    - Calling it to answer a question that is not a greeting.
  `;

  static getSchema() {
    return functionToolSchema(HelloWorldTool.ToolName, "Creates a friendly greeting using the user's name.", Args);
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  /** TUL-011 §6: the name must be non-empty, and a name of only whitespace is empty (as agent_change_mode treats blank strings). */
  protected override decode(input: unknown, context: AgentToolExecutionContext): DecodedArguments<Static<typeof Args>> {
    const decoded = super.decode(input, context);
    if (!decoded.ok || decoded.value.name.trim() !== '') return decoded;
    const problem = "'name' must be the user's name, got only whitespace; ask the user for their name";
    return {
      ok: false,
      message: `Invalid arguments for agent_hello_world: ${problem}.`,
      issues: [{ path: 'name', problem }],
    };
  }

  protected run({ name }: Static<typeof Args>, context: AgentToolExecutionContext) {
    return {
      message: `Hello, ${name}!`,
      sessionId: context.sessionId ?? null,
      conversationId: context.conversationId ?? null,
    };
  }
}
