/**
 * The audit-trail suite every session store passes: records kept as given, filters, keyset pages that
 * never repeat or skip a record, retention, and what an attacker can send (huge filters, odd cursors,
 * strings that look like SQL) and many writers at once, as hosts sharing a database would be.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SessionStoreError } from '../src/errors.js';
import type { AuditFilter, AuditRecord, AuditStore, NewAuditRecord } from '../src/audit.js';
import { twoHostsOn } from './fixtures/two-hosts.js';
import type { SessionStoreHarness } from './session-store.suite.js';

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

function call(overrides: Partial<NewAuditRecord> = {}): NewAuditRecord {
  return {
    kind: 'tool_call',
    principal: 'ops',
    sessionId: 'session-1',
    tool: 'testing_issue_refund',
    argumentsHash: hash('{"amount":5}'),
    outcome: 'OK',
    durationMs: 12,
    traceId: '0af7651916cd43dd8448eb211c80319c',
    ...overrides,
  };
}

/** Every record the filter selects, page by page, and the pages' sizes. */
async function readAll(audit: AuditStore, filter: AuditFilter): Promise<{ records: AuditRecord[]; pages: number[] }> {
  const records: AuditRecord[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await audit.list({ ...filter, cursor });
    records.push(...page.records);
    pages.push(page.records.length);
    cursor = page.nextCursor;
  } while (cursor !== null && pages.length < 10_000);
  return { records, pages };
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SessionStoreError);
  return error as SessionStoreError;
}

export function describeAuditStore(name: string, harness: SessionStoreHarness): void {
  describe(`${name}: audit trail`, () => {
    const twoHosts = twoHostsOn(harness);

    it('keeps every field of a record as given, and reads it back by id from another host', async () => {
      const [a, b] = await twoHosts();
      await a.audit.append([
        call({ at: '2026-11-27T10:42:00.000Z' }),
        {
          kind: 'approval_decision',
          principal: 'alice',
          sessionId: null,
          tool: 'testing_issue_refund',
          argumentsHash: hash('{"amount":5000}'),
          outcome: 'APPROVED',
          durationMs: null,
          traceId: null,
          approvalId: 'approval-1',
          decision: 'approve',
        },
        call({ kind: 'mode_change', tool: 'agent_change_mode', fromMode: 'general', toMode: 'ddr_authoring' }),
      ]);
      const page = await b.audit.list();
      expect(page.nextCursor).toBeNull();
      const [mode, decision, first] = page.records;
      expect(first).toEqual({
        id: first!.id,
        at: '2026-11-27T10:42:00.000Z',
        kind: 'tool_call',
        principal: 'ops',
        sessionId: 'session-1',
        tool: 'testing_issue_refund',
        argumentsHash: hash('{"amount":5}'),
        outcome: 'OK',
        durationMs: 12,
        traceId: '0af7651916cd43dd8448eb211c80319c',
        approvalId: null,
        decision: null,
        fromMode: null,
        toMode: null,
      });
      expect(decision).toMatchObject({ kind: 'approval_decision', principal: 'alice', decision: 'approve' });
      expect(mode).toMatchObject({ kind: 'mode_change', fromMode: 'general', toMode: 'ddr_authoring' });
      // Later records have greater ids; a record appended without a time gets the store's clock.
      expect(Number(mode!.id)).toBeGreaterThan(Number(decision!.id));
      expect(Math.abs(Date.parse(mode!.at) - Date.now())).toBeLessThan(60_000);
      expect(await a.audit.get(decision!.id)).toEqual(decision);
      for (const id of ['0', '-1', 'abc', '99999999999999', '1e3', '', "1' OR '1'='1", 'x'.repeat(100_000)])
        expect(await a.audit.get(id)).toBeUndefined();
    });

    it('filters by tool, principal, session, outcome, kind and time, alone and together', async () => {
      const [a] = await twoHosts();
      await a.audit.append([
        call({ at: '2026-11-27T09:00:00.000Z', tool: 'refund', principal: 'ops', sessionId: 's1', outcome: 'OK' }),
        call({ at: '2026-11-27T10:00:00.000Z', tool: 'refund', principal: 'bob', sessionId: 's2', outcome: 'TIMEOUT' }),
        call({
          at: '2026-11-27T11:00:00.000Z',
          tool: 'delete',
          principal: 'ops',
          sessionId: 's1',
          outcome: 'FORBIDDEN',
        }),
        call({ at: '2026-11-27T12:00:00.000Z', tool: 'delete', principal: null, sessionId: null, outcome: 'OK' }),
        { ...call({ at: '2026-11-27T12:30:00.000Z', tool: 'refund' }), kind: 'approval_decision', outcome: 'DENIED' },
      ]);
      const times = async (filter: AuditFilter) => (await a.audit.list(filter)).records.map((r) => r.at.slice(11, 16));
      expect(await times({ tool: 'refund' })).toEqual(['12:30', '10:00', '09:00']);
      expect(await times({ principal: 'ops', tool: 'refund' })).toEqual(['12:30', '09:00']);
      expect(await times({ sessionId: 's1' })).toEqual(['11:00', '09:00']);
      expect(await times({ outcome: 'TIMEOUT' })).toEqual(['10:00']);
      expect(await times({ kind: 'approval_decision' })).toEqual(['12:30']);
      // since is inclusive, until exclusive; any ISO-8601 spelling of a time works.
      expect(await times({ since: '2026-11-27T10:00:00Z', until: '2026-11-27T12:00:00.000Z' })).toEqual([
        '11:00',
        '10:00',
      ]);
      expect(await times({ since: '2026-11-27T11:00:00+01:00' })).toEqual(['12:30', '12:00', '11:00', '10:00']);
      expect(await times({ tool: 'nothing-by-this-name' })).toEqual([]);
    });

    it('pages newest first by keyset: no record repeats or goes missing while others are appended and pruned', async () => {
      const [a, b] = await twoHosts();
      await a.audit.append(Array.from({ length: 25 }, (_, i) => call({ tool: 'paged', durationMs: i })));
      const first = await b.audit.list({ tool: 'paged', limit: 10 });
      expect(first.records.map((r) => r.durationMs)).toEqual([24, 23, 22, 21, 20, 19, 18, 17, 16, 15]);
      // Newer records arrive and the oldest are pruned between two pages.
      await a.audit.append(Array.from({ length: 5 }, (_, i) => call({ tool: 'paged', durationMs: 100 + i })));
      await a.audit.prune({ maxRecords: 28 });
      const second = await b.audit.list({ tool: 'paged', limit: 10, cursor: first.nextCursor });
      expect(second.records.map((r) => r.durationMs)).toEqual([14, 13, 12, 11, 10, 9, 8, 7, 6, 5]);
      const third = await b.audit.list({ tool: 'paged', limit: 10, cursor: second.nextCursor });
      // Two of the oldest were pruned: the last page holds what is left, and says it is the last.
      expect(third.records.map((r) => r.durationMs)).toEqual([4, 3, 2]);
      expect(third.nextCursor).toBeNull();
      // A limit exactly the number left gives no cursor to an empty page.
      const whole = await b.audit.list({ tool: 'paged', limit: 28 });
      expect(whole.records).toHaveLength(28);
      expect(whole.nextCursor).toBeNull();
    });

    it('keeps what the retention says: the newest by count, the recent by age, in batches past the batch size', async () => {
      const [a, b] = await twoHosts();
      const old = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
      await a.audit.append(Array.from({ length: 4500 }, (_, i) => call({ at: old, durationMs: i })));
      await a.audit.append(Array.from({ length: 30 }, (_, i) => call({ tool: 'recent', durationMs: i })));
      expect(await b.audit.prune({ maxAgeMs: 24 * 3600 * 1000 })).toBe(4500);
      expect((await readAll(b.audit, {})).records).toHaveLength(30);
      expect(await a.audit.prune({ maxRecords: 10 })).toBe(20);
      const left = (await a.audit.list()).records.map((r) => r.durationMs);
      expect(left).toEqual([29, 28, 27, 26, 25, 24, 23, 22, 21, 20]);
      expect(await a.audit.prune({ maxRecords: 10, maxAgeMs: 3_600_000 })).toBe(0);
      expect(await a.audit.prune({})).toBe(0);
      for (const retention of [{ maxRecords: 0 }, { maxAgeMs: -1 }, { maxRecords: 1.5 }, { maxAgeMs: Number.NaN }])
        expect((await refusal(a.audit.prune(retention))).code).toBe('INVALID_ARGUMENT');
    });

    it('writes a batch of any size in its order, every field kept (SQLite: 100 rows per statement, then one by one)', async () => {
      const [a, b] = await twoHosts();
      const batch = Array.from({ length: 257 }, (_, i) =>
        call({
          at: new Date(Date.UTC(2026, 10, 27, 10, 0, 0, i)).toISOString(),
          principal: i % 2 === 0 ? `p-${i}` : null,
          sessionId: i % 3 === 0 ? null : `s-${i}`,
          tool: `tool-${i}`,
          argumentsHash: i % 5 === 0 ? null : hash(String(i)),
          outcome: i % 7 === 0 ? 'TIMEOUT' : 'OK',
          durationMs: i,
          traceId: i % 4 === 0 ? null : '0af7651916cd43dd8448eb211c80319c',
          ...(i % 11 === 0 ? { kind: 'approval_decision', decision: 'approve', approvalId: `ap-${i}` } : {}),
          ...(i % 13 === 0 ? { kind: 'mode_change', fromMode: 'general', toMode: `m-${i}` } : {}),
        }),
      );
      await a.audit.append(batch);
      const records = (await readAll(b.audit, { limit: 1000 })).records.reverse();
      expect(records.map((r) => r.durationMs)).toEqual(batch.map((_, i) => i));
      records.forEach((record, i) =>
        expect(record).toEqual({
          id: record.id,
          approvalId: null,
          decision: null,
          fromMode: null,
          toMode: null,
          ...batch[i],
        }),
      );
    });

    it('refuses a record it cannot keep whole, and then stores none of its batch', async () => {
      const [a] = await twoHosts();
      const bad: Array<[Partial<NewAuditRecord>, string, RegExp]> = [
        [{ tool: 'x'.repeat(257) }, 'VALUE_TOO_LONG', /tool is 257 characters long/],
        [{ principal: 'p'.repeat(1_000_000) }, 'VALUE_TOO_LONG', /principal/],
        [{ tool: '' }, 'INVALID_ARGUMENT', /tool must not be empty/],
        [{ sessionId: 'nul\u0000id' }, 'INVALID_ARGUMENT', /sessionId contains a NUL/],
        [{ argumentsHash: '{"amount":5}' }, 'INVALID_ARGUMENT', /argumentsHash must be a SHA-256/],
        [{ traceId: 'not-a-trace' }, 'INVALID_ARGUMENT', /traceId must be a W3C trace id/],
        [{ durationMs: -1 }, 'INVALID_ARGUMENT', /durationMs/],
        [{ at: 'yesterday' }, 'INVALID_ARGUMENT', /at "yesterday" is not a time/],
        [{ kind: 'drop_table' as never }, 'INVALID_ARGUMENT', /kind must be one of/],
      ];
      for (const [fields, code, message] of bad) {
        const error = await refusal(a.audit.append([call({ tool: 'good' }), call(fields)]));
        expect(error.code).toBe(code);
        expect(error.message).toMatch(message);
      }
      expect((await a.audit.list()).records).toEqual([]);
    });

    it('answers huge filters, odd cursors and limits with a refusal that names them, and SQL in a filter is only text', async () => {
      const [a] = await twoHosts();
      const injected = ["x' OR '1'='1", "'; DROP TABLE agent_audit_records; --", 'tool" OR 1=1 --', '%', '_'];
      await a.audit.append([call({ tool: 'plain' }), ...injected.map((tool) => call({ tool, principal: tool }))]);
      for (const value of injected) {
        const page = await a.audit.list({ tool: value, principal: value, outcome: 'OK' });
        expect(page.records.map((r) => r.tool)).toEqual([value]);
      }
      expect((await a.audit.list({ tool: "plain' OR '1'='1" })).records).toEqual([]);
      const huge = 'h'.repeat(5_000_000);
      for (const field of ['tool', 'principal', 'sessionId', 'outcome'] as const) {
        const error = await refusal(a.audit.list({ [field]: huge }));
        expect(error.code).toBe('VALUE_TOO_LONG');
        expect(error.message).toContain(`The ${field} filter is 5000000 characters long`);
      }
      expect((await a.audit.list({ sessionId: 'nul\u0000' })).records).toEqual([]);
      for (const cursor of [
        '0',
        '-5',
        'abc',
        '1e3',
        ' 12',
        '12 ',
        '9'.repeat(40),
        '1 OR 1=1',
        '1;DROP',
        '\u0000',
        huge,
      ]) {
        const error = await refusal(a.audit.list({ cursor }));
        expect(error.code).toBe('INVALID_ARGUMENT');
        expect(error.message).toMatch(/is not a cursor this store gave out/);
        expect(error.message.length).toBeLessThan(300);
      }
      for (const limit of [0, -1, 1001, 2.5, Number.NaN, Number.POSITIVE_INFINITY])
        expect((await refusal(a.audit.list({ limit }))).message).toMatch(/limit must be a whole number from 1 to 1000/);
      for (const since of ['last tuesday', '2026-13-45', '+275760-09-13T00:00:00.000Z', huge])
        expect((await refusal(a.audit.list({ since }))).message).toMatch(/since .* is not a time/);
      expect((await refusal(a.audit.list({ kind: 'x' as never }))).message).toMatch(/kind filter must be one of/);
      // The table is still there and whole.
      expect((await readAll(a.audit, {})).records).toHaveLength(injected.length + 1);
    });

    it('takes concurrent batches from several hosts: every record kept once, and paged without repeats', async () => {
      const [a, b] = await twoHosts();
      const writers = Array.from({ length: 16 }, (_, w) =>
        (w % 2 === 0 ? a : b).audit.append(
          Array.from({ length: 50 }, (_, i) => call({ principal: `writer-${w}`, durationMs: i })),
        ),
      );
      await Promise.all(writers);
      const { records, pages } = await readAll(a.audit, { limit: 77 });
      expect(records).toHaveLength(800);
      expect(new Set(records.map((r) => r.id)).size).toBe(800);
      expect(pages.slice(0, -1).every((size) => size === 77)).toBe(true);
      const ids = records.map((r) => Number(r.id));
      expect(ids).toEqual([...ids].sort((x, y) => y - x));
      for (let w = 0; w < 16; w++) {
        const own = (await readAll(b.audit, { principal: `writer-${w}`, limit: 1000 })).records;
        // A batch is all or none, and in its own order.
        expect(own.map((r) => r.durationMs)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
      }
    });
  });
}
