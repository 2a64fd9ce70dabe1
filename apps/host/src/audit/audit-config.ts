import type { Static } from 'typebox';
import type { AuditRetention } from '@aptix/agent-sessions';
import { ConfigError } from '../config-file.js';
import type { AuditConfigFile } from './audit-config-schema.js';

/** The audit trail's settings, resolved (see docs/audit.md). */
export interface AuditConfig {
  readonly enabled: boolean;
  /** Calls of read-only tools are recorded too. */
  readonly readOnlyCalls: boolean;
  readonly retention: AuditRetention;
  readonly flushIntervalMs: number;
  readonly pruneIntervalMs: number;
}

const DAY_MS = 24 * 3600 * 1000;

/** The file's `audit` section with its defaults, then `APTIX_AUDIT` (off, on, or all: read-only calls too). */
export function resolveAuditConfig(file: Static<typeof AuditConfigFile> = {}, env?: string): AuditConfig {
  let enabled = file.enabled ?? true;
  let readOnlyCalls = file.readOnlyCalls ?? false;
  if (env !== undefined) {
    const word = env.trim().toLowerCase();
    if (!['off', 'on', 'all'].includes(word))
      throw new ConfigError(
        `APTIX_AUDIT "${env.slice(0, 40)}" is not off, on or all. Fix: off records nothing, on ` +
          `records calls that are not read-only, approval decisions and mode changes, all records ` +
          `read-only calls too.`,
      );
    enabled = word !== 'off';
    readOnlyCalls = word === 'all';
  }
  return {
    enabled,
    readOnlyCalls,
    retention: {
      maxAgeMs: (file.maxAgeDays ?? 90) * DAY_MS,
      ...(file.maxRecords === undefined ? {} : { maxRecords: file.maxRecords }),
    },
    flushIntervalMs: file.flushIntervalMs ?? 200,
    pruneIntervalMs: file.pruneIntervalMs ?? 600_000,
  };
}
