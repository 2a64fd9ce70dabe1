import { Type, type Static } from 'typebox';
import { functionToolSchema, TypedAgentTool, usage, type AgentToolExecutionContext, type ToolDependencies } from '@aptix/tool-contract';

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
    - INVALID_ARGUMENTS: 'name' is missing, empty or not a string.

    Good usage:
    - The user says "Hi, I'm Ada, say hello!" → { "name": "Ada" }

    Bad usage:
    - {} or { "name": "" }: a greeting needs a name.
    - Calling it to answer a question that is not a greeting.
  `;

  static getSchema() {
    return functionToolSchema(HelloWorldTool.ToolName, "Creates a friendly greeting using the user's name.", Args);
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected run({ name }: Static<typeof Args>, context: AgentToolExecutionContext) {
    return { message: `Hello, ${name}!`, sessionId: context.sessionId ?? null, conversationId: context.conversationId ?? null };
  }
}
