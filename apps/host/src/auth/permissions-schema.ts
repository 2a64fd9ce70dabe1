import { Type } from 'typebox';

/**
 * What one principal may do, as the configuration file writes it: an API key's entry in `principals`,
 * and what an OAuth scope grants in `oauth.scopes` (see permissions.ts for the rules).
 */
export const PrincipalPermissions = Type.Object(
  {
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description:
          'Tools it may call and see: names, * patterns, a leading ! excludes (default: every tool, unless packages is set).',
      }),
    ),
    packages: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Tool packages whose tools it may call and see, by package name, the same patterns.',
      }),
    ),
    modes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Modes it may move a session into, the same patterns (default: every mode).',
      }),
    ),
    approve: Type.Optional(
      Type.Union([Type.Boolean(), Type.Array(Type.String({ minLength: 1 }))], {
        description:
          'Whether it may decide approvals, or the tools whose approvals it may decide (default false). Never the ones it asked for.',
      }),
    ),
    admin: Type.Optional(
      Type.Boolean({
        description: 'Whether it may use the admin routes: the approvals list and the packages list (default false).',
      }),
    ),
    sessions: Type.Optional(
      Type.Union([Type.Literal('own'), Type.Literal('all')], {
        description: "The agent sessions it may read and change: its own (default), or every principal's.",
      }),
    ),
  },
  { additionalProperties: false },
);
