import { adminOnly } from './admin-only.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ScopeError, type AptixHost, type CallOptions, type ToolScope } from '../aptix-host.js';
import { ErrorBody } from './schemas.js';
import { pendingApprovalView } from '../approvals/present.js';
import type { AnyFastifyInstance } from './fastify-instance.js';
import { invokeEnvelope } from './invoke-envelope.js';
import { invokeAsEventStream, INVOKE_EVENT_STREAM_DESCRIPTION, wantsEventStream } from './invoke-stream.js';

const InvokeResultBody = Type.Object({
  successful: Type.Boolean(),
  result: Type.Unknown({ description: "The tool's result, parsed from its JSON; null when the call failed." }),
  errors: Type.Array(Type.Object({ message: Type.String(), code: Type.Optional(Type.String()) })),
  content: Type.Optional(
    Type.Array(Type.Unknown(), {
      description:
        "The tool's content blocks beyond JSON text, when it gave any: MCP's shapes { type: " +
        "'text', text }, { type: 'image' | 'audio', data (base64), mimeType }, { type: 'resource', " +
        'resource: { uri, mimeType?, text | blob } }.',
    }),
  ),
});
const Format = Type.Enum(['responses', 'chat', 'mcp'], { default: 'responses', description: 'Definition format.' });
const ToolsQuery = Type.Object(
  {
    mode: Type.Optional(Type.String({ description: "Only this mode's tools." })),
    sessionId: Type.Optional(Type.String({ description: "Only the tools of this session's current mode." })),
    format: Type.Optional(Format),
  },
  { additionalProperties: false },
);
const InvokeBody = Type.Object(
  {
    arguments: Type.Union([Type.Object({}, { additionalProperties: true }), Type.String()], {
      description: 'The arguments, as an object or a JSON string.',
    }),
    context: Type.Optional(
      Type.Object(
        {
          sessionId: Type.Optional(Type.String({ minLength: 1 })),
          conversationId: Type.Optional(Type.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const Name = Type.Object({ name: Type.String() });
/** The invoke route's payload is JSON text already: sent as it is. */
const asIs = (payload: unknown): string => payload as string;
const PendingApprovalBody = Type.Object(
  {
    status: Type.Literal('pending_approval'),
    approvalId: Type.String(),
    toolName: Type.String(),
    reason: Type.String(),
    sessionId: Type.Union([Type.String(), Type.Null()]),
    expiresAt: Type.String(),
    message: Type.String({ description: 'What happens next, for a person or a model.' }),
  },
  {
    description:
      "The tool's approval policy asks a person first: nothing ran yet. Decide it at POST /v1/approvals/{approvalId}.",
  },
);
const Approvals = Type.Record(Type.String(), Type.String(), {
  description: 'Tools whose calls may wait for a person: "always", or "dynamic" (depends on the arguments).',
});

/** A definition's tool name, in any of the three formats. */
function definitionName(definition: unknown): string {
  const { name, function: nested } = definition as { name?: string; function?: { name: string } };
  return name ?? nested!.name;
}

/** Discovery and invocation: `/v1/tools`, `/v1/tools/:name`, `/v1/tools/:name/invoke`, `/v1/modes`. */
export function registerToolRoutes(untyped: AnyFastifyInstance, host: AptixHost): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/tools',
    {
      schema: {
        summary: 'The tool definitions, for a mode or a session',
        querystring: ToolsQuery,
        response: {
          200: Type.Object({ format: Type.String(), tools: Type.Array(Type.Unknown()), approvals: Approvals }),
          400: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { mode, sessionId, format = 'responses' } = request.query;
      if (mode !== undefined && sessionId !== undefined)
        return reply
          .code(400)
          .send({ error: { code: 'BAD_REQUEST', message: 'Give either mode or sessionId, not both.' } });
      const scope: ToolScope = {
        ...(mode === undefined ? {} : { mode }),
        ...(sessionId === undefined ? {} : { sessionId }),
        ...(request.actor === undefined ? {} : { actor: request.actor }),
      };
      try {
        // Only the tools this principal may call.
        const tools = [
          ...host.permissions.visible(request.actor, await host.definitions(format, scope), definitionName),
        ];
        // OpenAI's formats have no field for it: gated tools are named beside the definitions.
        const approvals = Object.fromEntries(
          host.cradle.registry
            .list()
            .filter((tool) => tool.approval !== 'never' && host.permissions.mayCall(request.actor, tool.name))
            .map((tool) => [tool.name, tool.approval]),
        );
        return { format, tools, approvals };
      } catch (error) {
        if (error instanceof ScopeError)
          return reply
            .code(error.code === 'UNKNOWN_MODE' ? 400 : 404)
            .send({ error: { code: error.code, message: error.message } });
        throw error;
      }
    },
  );

  app.get(
    '/v1/tools/:name',
    {
      schema: {
        summary: 'One tool: schema, usage guidance and definitions',
        params: Name,
        response: { 200: Type.Unknown(), 403: ErrorBody, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const { registry } = host.cradle;
      const { name } = request.params;
      const tool = registry.get(name);
      if (tool === undefined)
        return reply.code(404).send({
          error: {
            code: 'TOOL_NOT_FOUND',
            // Only the tools this principal may call: the others are not its to learn of.
            message: `Tool "${name}" does not exist. Available tools: ${registry
              .names()
              .filter((other) => host.permissions.mayCall(request.actor, other))
              .join(', ')}.`,
          },
        });
      if (!host.permissions.mayCall(request.actor, tool.name))
        return reply.code(403).send({
          error: {
            code: 'FORBIDDEN',
            message: `Reading ${tool.name} needs the permission tools: ${tool.name}, which this principal does not have.`,
          },
        });
      const [responses] = registry.definitions('responses', [tool.name]);
      const [chat] = registry.definitions('chat', [tool.name]);
      const [mcp] = registry.definitions('mcp', [tool.name]);
      return {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        usageMetadata: tool.usageMetadata,
        strict: tool.strict,
        strictReport: { declared: tool.strictDeclared, problems: tool.strictView.problems },
        annotations: tool.annotations ?? {},
        approval: tool.approval,
        package: packageOf(tool.name),
        definitions: { responses, chat, mcp },
      };
    },
  );

  const packageOf = (name: string): string | null =>
    host.cradle.toolPackages.find((p) => p.tools.some((toolClass) => toolClass.ToolName === name))?.name ?? null;
  app.get(
    '/v1/packages',
    {
      preHandler: adminOnly(host),
      schema: {
        summary: 'The tool packages this host loaded, and their tools',
        response: {
          200: Type.Object({
            packages: Type.Array(
              Type.Object({
                name: Type.String(),
                version: Type.Union([Type.String(), Type.Null()]),
                tools: Type.Array(Type.String()),
              }),
            ),
          }),
          403: ErrorBody,
        },
      },
    },
    () => ({
      packages: host.cradle.toolPackages.map((p) => ({
        name: p.name,
        version: p.version ?? null,
        tools: p.tools.map((toolClass) => toolClass.ToolName as string),
      })),
    }),
  );

  app.get('/v1/modes', { schema: { summary: 'The mode catalog' } }, () => ({ modes: host.modes() }));

  // Not an async function (a promise chain), which spares the route two awaits; see AptixHost.call.
  const InvokeAnswer = {
    description: 'The result, as JSON; or, with `Accept: text/event-stream`, as server-sent events.',
    content: {
      'application/json': { schema: InvokeResultBody },
      'text/event-stream': { schema: Type.String({ description: INVOKE_EVENT_STREAM_DESCRIPTION }) },
    },
  };
  app.post(
    '/v1/tools/:name/invoke',
    {
      schema: {
        summary: 'Call a tool',
        params: Name,
        body: InvokeBody,
        response: { 200: InvokeAnswer, 202: PendingApprovalBody, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      },
    },
    (request, reply) => {
      // Progress as server-sent events: its own module, so this JSON path stays as it is.
      if (wantsEventStream(request.headers.accept)) {
        const { sessionId, conversationId } = request.body.context ?? {};
        return invokeAsEventStream(request, reply, host, {
          name: request.params.name,
          args: request.body.arguments,
          sessionId,
          conversationId,
        }) as unknown as Promise<void>;
      }
      // A client that hangs up before the answer cancels the call (the tool's signal aborts). The signal,
      // and the listener for the hang-up, are made only for a call still running after its synchronous
      // start, when the executor asks for them: an AbortSignal costs about 3 µs to make on Node 20, more
      // than the rest of a small call, and most calls answer at once.
      const raw = reply.raw;
      let abort: AbortController | undefined;
      const signal = () => {
        if (abort !== undefined) return abort.signal;
        abort = new AbortController();
        const controller = abort;
        // Already gone (it hung up while the session was read, say): the call is cancelled before it starts.
        if (raw.destroyed) {
          if (!raw.writableFinished) controller.abort();
        } else {
          raw.once('close', () => {
            if (!raw.writableFinished) controller.abort();
          });
        }
        return controller.signal;
      };
      const body = request.body;
      const context = body.context;
      const options: CallOptions = {
        sessionId: context?.sessionId,
        conversationId: context?.conversationId,
        actor: request.actor,
        // The request's logger (it carries reqId, and actor): the executor's and the tool's lines go there.
        logger: request.log,
        signal,
      };
      const answered = host.call(request.params.name, body.arguments, options).then((outcome) => {
        if (outcome.kind === 'not_found')
          return reply.code(404).send({ error: { code: 'TOOL_NOT_FOUND', message: outcome.message } });
        if (outcome.kind === 'refused')
          return reply
            .code(outcome.code === 'SESSION_NOT_FOUND' ? 404 : 403)
            .send({ error: { code: outcome.code, message: outcome.message } });
        if (outcome.kind === 'pending_approval') return reply.code(202).send(pendingApprovalView(outcome.approval));
        return reply
          .code(200)
          .type('application/json; charset=utf-8')
          .serializer(asIs)
          .send(invokeEnvelope(outcome.result) as never);
      });
      // Fastify takes the reply itself as "already sent"; its route types only know the payload types.
      return answered as unknown as Promise<void>;
    },
  );
}
