import type { FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { UnitErrorCode, UnitOutcome } from '@aptix/tool-contract';
import { ScopeError, type AptixHost } from '../aptix-host.js';
import { hostUnits, unitScope } from '../units/unit-scope.js';
import type { UnitScope } from '../units/host-units.js';
import { promptListing, resourceListing, templateListing } from '../units/unit-listings.js';
import { ErrorBody } from './schemas.js';
import type { registerToolRoutes } from './tool-routes.js';

/** The server the routes are added to, as every route module takes it. */
type AnyFastifyInstance = Parameters<typeof registerToolRoutes>[0];

const Where = {
  mode: Type.Optional(Type.String({ description: "This mode's prompts or resources (default: the default mode)." })),
  sessionId: Type.Optional(Type.String({ description: "The prompts or resources of this session's current mode." })),
};
const WhereQuery = Type.Object(Where, { additionalProperties: false });
const ReadQuery = Type.Object(
  { ...Where, uri: Type.String({ minLength: 1, description: 'The URI to read: a listed one, or one of a template.' }) },
  { additionalProperties: false },
);
const RenderBody = Type.Object(
  {
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: "The prompt's arguments, all strings (as in MCP)." }),
    ),
  },
  { additionalProperties: false },
);
const PromptArgument = Type.Object({ name: Type.String(), description: Type.String(), required: Type.Boolean() });
const PromptBody = Type.Object({
  name: Type.String(),
  title: Type.Optional(Type.String()),
  description: Type.String(),
  arguments: Type.Array(PromptArgument),
});
const Described = {
  name: Type.String(),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  mimeType: Type.String(),
  annotations: Type.Optional(Type.Unknown()),
};
const Contents = Type.Array(
  Type.Object({
    uri: Type.String(),
    mimeType: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    blob: Type.Optional(Type.String({ description: 'Base64.' })),
  }),
);
const Messages = Type.Array(
  Type.Object({
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.Unknown({ description: "MCP's content block: text, image, audio or resource." }),
  }),
);

/** The HTTP status of a failed unit request: the caller's mistakes are 4xx; a package that failed is 502, one that was too slow 504. */
const STATUS: Readonly<Partial<Record<UnitErrorCode, number>>> = {
  PROMPT_NOT_FOUND: 404,
  RESOURCE_NOT_FOUND: 404,
  INVALID_ARGUMENTS: 400,
  INVALID_URI: 400,
  RENDER_FAILED: 502,
  READ_FAILED: 502,
  COMPLETION_FAILED: 502,
  MALFORMED_RESULT: 502,
  RESULT_TOO_LARGE: 502,
  TIMEOUT: 504,
  // A prompt that asks the client (its user, model or roots) cannot be asked over HTTP: use MCP.
  INPUT_REQUIRED: 409,
  SAMPLING_UNAVAILABLE: 409,
  ROOTS_UNAVAILABLE: 409,
};

/**
 * Prompts and resources over HTTP, as MCP serves them (issue 37): `GET /v1/prompts`,
 * `POST /v1/prompts/:name` (render), `GET /v1/resources` (with templates), `GET /v1/resources/read?uri=`.
 * The mode comes from `mode` or `sessionId` (the default mode otherwise); the principal sees what its
 * permissions allow, as over MCP.
 */
export function registerUnitRoutes(untyped: AnyFastifyInstance, host: AptixHost): void {
  const units = hostUnits(host);
  if (units === undefined) return;
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  const errors = { 400: ErrorBody, 404: ErrorBody, 502: ErrorBody, 504: ErrorBody };

  /** The request's scope, or undefined once the reply carries the refusal. */
  const scopeOf = async (
    where: { mode?: string; sessionId?: string },
    actor: string | undefined,
    reply: FastifyReply,
  ): Promise<UnitScope | undefined> => {
    if (where.mode !== undefined && where.sessionId !== undefined) {
      await reply
        .code(400)
        .send({ error: { code: 'BAD_REQUEST', message: 'Give either mode or sessionId, not both.' } });
      return undefined;
    }
    try {
      return await unitScope(host, where, actor);
    } catch (error) {
      if (!(error instanceof ScopeError)) throw error;
      await reply
        .code(error.code === 'UNKNOWN_MODE' ? 400 : 404)
        .send({ error: { code: error.code, message: error.message } });
      return undefined;
    }
  };
  const answer = <T>(outcome: UnitOutcome<T>, reply: FastifyReply): T | FastifyReply =>
    outcome.ok
      ? outcome.value
      : reply.code(STATUS[outcome.code] ?? 502).send({ error: { code: outcome.code, message: outcome.message } });

  app.get(
    '/v1/prompts',
    {
      schema: {
        summary: "The prompts a mode's sessions see",
        querystring: WhereQuery,
        response: { 200: Type.Object({ mode: Type.String(), prompts: Type.Array(PromptBody) }), ...errors },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request.query, request.actor, reply);
      if (scope === undefined) return reply;
      return { mode: scope.mode, prompts: units.promptsIn(scope).map(promptListing) };
    },
  );

  app.post(
    '/v1/prompts/:name',
    {
      schema: {
        summary: 'Render a prompt into messages',
        params: Type.Object({ name: Type.String() }),
        querystring: WhereQuery,
        body: Type.Optional(RenderBody),
        response: { 200: Type.Object({ description: Type.String(), messages: Messages }), ...errors },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request.query, request.actor, reply);
      if (scope === undefined) return reply;
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- kept for callers in plain JavaScript and tool packages, which can pass what the type rules out
      return answer(await units.render(request.params.name, request.body?.arguments ?? {}, scope), reply);
    },
  );

  app.get(
    '/v1/resources',
    {
      schema: {
        summary: "The resources and resource templates a mode's sessions see",
        querystring: WhereQuery,
        response: {
          200: Type.Object({
            mode: Type.String(),
            resources: Type.Array(Type.Object({ uri: Type.String(), ...Described })),
            templates: Type.Array(Type.Object({ uriTemplate: Type.String(), ...Described })),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const scope = await scopeOf(request.query, request.actor, reply);
      if (scope === undefined) return reply;
      return {
        mode: scope.mode,
        resources: units
          .resourcesIn(scope)
          .map(({ resource, uri, name, title }) => resourceListing(resource, uri, name, title)),
        templates: units.templatesIn(scope).map(templateListing),
      };
    },
  );

  app.get(
    '/v1/resources/read',
    {
      schema: {
        summary: 'Read a resource by URI',
        querystring: ReadQuery,
        response: { 200: Type.Object({ contents: Contents }), ...errors },
      },
    },
    async (request, reply) => {
      const { uri, ...where } = request.query;
      const scope = await scopeOf(where, request.actor, reply);
      if (scope === undefined) return reply;
      const read = await units.read(uri, scope);
      return read.ok ? { contents: read.value } : answer(read, reply);
    },
  );
}
