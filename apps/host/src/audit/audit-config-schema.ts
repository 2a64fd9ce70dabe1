import { Type } from 'typebox';

/** The `audit` section of `aptix.config.json` (see docs/audit.md). */
export const AuditConfigFile = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'Whether the host records its audit trail: calls of tools that are not read-only, approval decisions and mode changes (default true). APTIX_AUDIT=off|on|all overrides it.',
      }),
    ),
    readOnlyCalls: Type.Optional(
      Type.Boolean({
        description:
          'Record calls of read-only tools (readOnlyHint: true) too (default false). APTIX_AUDIT=all sets it.',
      }),
    ),
    maxAgeDays: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Records older than this many days are pruned (default 90).' }),
    ),
    maxRecords: Type.Optional(
      Type.Integer({ minimum: 1, description: 'At most this many records are kept, the newest (default: no bound).' }),
    ),
    flushIntervalMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 60_000,
        description:
          'Records wait at most this long in memory before they are written, in one batch (default 200 ms). A graceful stop writes what waits.',
      }),
    ),
    pruneIntervalMs: Type.Optional(
      Type.Integer({
        minimum: 1000,
        description: 'How often a serving host prunes what the retention no longer keeps (default 10 minutes).',
      }),
    ),
  },
  { additionalProperties: false },
);
