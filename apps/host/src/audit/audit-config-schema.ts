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
      // Bounded so that the age in milliseconds stays a safe integer the store accepts (100 years is far past any policy).
      Type.Integer({
        minimum: 1,
        maximum: 36_500,
        description: 'Records older than this many days are pruned (default 90; at most 36500).',
      }),
    ),
    maxRecords: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'At most this many records are kept, the newest (default: no bound).',
      }),
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
        // A timer past 2^31-1 ms fires at once in Node.js (TimeoutOverflowWarning): the host would prune every millisecond.
        maximum: 2_147_483_647,
        description:
          'How often a serving host prunes what the retention no longer keeps, in milliseconds (default 10 minutes; at most 2147483647, about 24.8 days).',
      }),
    ),
  },
  { additionalProperties: false },
);
