import { Type, type Static } from 'typebox';
import {
  functionToolSchema,
  TypedAgentTool,
  usage,
  type AgentToolExecutionContext,
  type ToolDependencies,
} from '@aptix/tool-contract';

const Args = Type.Object(
  {
    message: Type.String({ minLength: 1, description: "Text to send back with a 'pong' prefix." }),
    count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10, description: "How many times to say 'pong', 1 to 10; 1 when omitted." }),
    ),
  },
  { additionalProperties: false },
);

/** A sanity check of the whole pipeline (model → reasoner → executor → tool and back): answers a ping with a pong. */
export class PingPongTool extends TypedAgentTool<typeof Args> {
  static readonly ToolName = 'testing_ping_pong';
  static readonly ToolUsageMetadata = usage`
    testing_ping_pong — Usage Guide

    Primary purpose:
    - Check that server-side tool calls work end to end: the tool answers a message with a pong.

    Rules:
    - Call it only when the user or a test asks for a ping, or to check that tools work.
    - Do not call it to answer a real question; it only echoes.
    - Safe to call often: it has no side effects.

    Arguments:
    - message (required): any non-empty text; it comes back after the pongs.
    - count (optional): how many times to say "pong", a whole number from 1 to 10 (default 1).

    Error codes:
    - INVALID_ARGUMENTS: 'message' is missing or empty, or 'count' is not a whole number from 1 to 10.
    - TOOL_EXCEPTION: the tool failed unexpectedly; nothing was done. Tell the user; do not retry more than once.
    - TIMEOUT: the host stopped the call at its time-out before it finished; nothing was done.
    - A successful result with "wasCancelled": true: the caller cancelled the call before it ran; nothing was done.

    Good usage:
    - { "message": "hello" } → reply "pong: hello", count 1
    - { "message": "hello", "count": 3 } → reply "pong pong pong: hello", count 3

    Bad usage:
    - { "count": 3 }: 'message' is required.
    - { "message": "hello", "count": 50 }: 'count' goes up to 10.
  `;

  /** It only echoes: read-only, so hosts that keep an audit trail of calls that change things leave it out. */
  static readonly ToolAnnotations = {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  };

  static getSchema() {
    return functionToolSchema(
      PingPongTool.ToolName,
      'Answers a message with a pong: a test that tool calls work end to end.',
      Args,
    );
  }

  constructor({ logger }: ToolDependencies) {
    super(Args, logger);
  }

  protected run({ message, count = 1 }: Static<typeof Args>, context: AgentToolExecutionContext) {
    const reply = `${Array(count).fill('pong').join(' ')}: ${message}`;
    return { reply, count, sessionId: context.sessionId ?? null, conversationId: context.conversationId ?? null };
  }
}
