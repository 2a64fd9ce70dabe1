import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { AptixHost } from '../aptix-host.js';

/** What `GET /v1/principal` answers: who the caller is, and what it may do, in concrete names. */
export const PrincipalView = Type.Object({
  principal: Type.Union([Type.String(), Type.Null()], {
    description: 'The API key name, "oauth:<subject>" for a token, or null on a host without keys.',
  }),
  via: Type.Union([Type.Literal('apiKey'), Type.Literal('oauth'), Type.Literal('none')]),
  scopes: Type.Optional(
    Type.Array(Type.String(), { description: "A token's scopes that this host knows (oauth only)." }),
  ),
  tools: Type.Array(Type.String(), { description: 'The tools it may call and see.' }),
  modes: Type.Array(Type.String(), { description: 'The modes it may move a session into.' }),
  approve: Type.Array(Type.String(), { description: 'The gated tools whose approvals it may decide.' }),
  admin: Type.Boolean({ description: 'Whether it may use the admin routes (approvals list, packages list).' }),
  sessions: Type.Union([Type.Literal('own'), Type.Literal('all')]),
});
export type PrincipalView = Static<typeof PrincipalView>;

/**
 * `GET /v1/principal`: the caller's own principal and what it may do (issue 32), for the console to
 * show the signed-in principal what it may do and nothing else. It says nothing of other principals,
 * and never the key or the token.
 */
export function registerPrincipalRoute(untyped: FastifyInstance, host: AptixHost): void {
  const app = untyped.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/principal',
    { schema: { summary: 'Who the caller is, and what it may do', response: { 200: PrincipalView } } },
    (request): PrincipalView => {
      const permissions = host.permissions.of(request.actor);
      const { registry, modeCatalog } = host.cradle;
      const tools = registry.names().filter((name) => host.permissions.mayCall(request.actor, name));
      const token = request.tokenPermissions;
      return {
        principal: request.actor ?? null,
        via: request.actor === undefined ? 'none' : token !== undefined ? 'oauth' : 'apiKey',
        ...(token === undefined ? {} : { scopes: [...token.scopes] }),
        tools,
        modes: modeCatalog.keys.filter((mode) => permissions.mayUseMode(mode)),
        approve: registry
          .list()
          .filter((tool) => tool.approval !== 'never' && permissions.mayDecide(tool.name))
          .map((tool) => tool.name),
        admin: permissions.admin,
        sessions: permissions.allSessions ? 'all' : 'own',
      };
    },
  );
}
