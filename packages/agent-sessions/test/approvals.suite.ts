/**
 * The approval-gate suite every session store passes: each transition taken at most once, across
 * stores opened separately on one database, as hosts would.
 */
import { describe, expect, it } from 'vitest';
import type { AgentSessionStore } from '../src/types.js';
import type { ToolApproval } from '../src/approvals.js';
import { twoHostsOn } from './fixtures/two-hosts.js';
import type { SessionStoreHarness } from './session-store.suite.js';

export function describeApprovalStore(name: string, harness: SessionStoreHarness): void {
  describe(`${name}: approvals`, () => {
    /** Two stores on one fresh database: two hosts. */
    const twoHosts = twoHostsOn(harness);

    async function pending(store: AgentSessionStore, ttlMs = 60_000): Promise<ToolApproval> {
      const session = await store.createSession({});
      return store.approvals.create({
        sessionId: session.id,
        toolName: 'testing_issue_refund',
        arguments: '{"amount":5000,"currency":"EUR"}',
        reason: 'A refund of 5000 EUR needs approval.',
        requestedBy: 'ops',
        ttlMs,
      });
    }

    it('keeps a pending approval with everything a person needs to decide', async () => {
      const [store, other] = await twoHosts();
      const approval = await pending(store);
      expect(approval).toMatchObject({
        toolName: 'testing_issue_refund',
        arguments: '{"amount":5000,"currency":"EUR"}',
        reason: 'A refund of 5000 EUR needs approval.',
        requestedBy: 'ops',
        status: 'pending',
        decidedBy: null,
        result: null,
      });
      expect(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt)).toBeGreaterThan(59_000);
      expect(await other.approvals.get(approval.id)).toEqual(approval);
      expect(
        (await other.approvals.list({ sessionId: approval.sessionId!, status: 'pending' })).map((a) => a.id),
      ).toEqual([approval.id]);
      expect(await other.approvals.list({ status: 'approved' })).toEqual([]);
      expect(await store.approvals.get('no-such-approval')).toBeUndefined();
      expect(await store.approvals.get('nul\u0000id')).toBeUndefined();
    });

    it('lets exactly one of two hosts decide, and tells the other who did', async () => {
      const [a, b] = await twoHosts();
      for (let round = 0; round < 5; round++) {
        const approval = await pending(a);
        const outcomes = await Promise.all([
          a.approvals.decide(approval.id, 'approve', 'alice', null),
          b.approvals.decide(approval.id, 'deny', 'bob', 'no'),
        ]);
        const kinds = outcomes.map((o) => o.kind).sort();
        expect(kinds).toEqual(['already_decided', 'decided']);
        const winner = outcomes.find((o) => o.kind === 'decided')!;
        const loser = outcomes.find((o) => o.kind === 'already_decided')!;
        if (winner.kind !== 'decided' || loser.kind !== 'already_decided') throw new Error('unreachable');
        expect(loser.approval.status).toBe(winner.approval.status);
        expect(loser.approval.decidedBy).toBe(winner.approval.decidedBy);
      }
    });

    it('lets exactly one host claim an approved call, and completes it once', async () => {
      const [a, b] = await twoHosts();
      const approval = await pending(a);
      await a.approvals.decide(approval.id, 'approve', 'alice', 'fine');
      const claims = await Promise.all([
        a.approvals.claim(approval.id, 'host-a'),
        b.approvals.claim(approval.id, 'host-b'),
      ]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const result = { successful: true, result: { refundId: 'r1' }, errors: [] };
      const done = await b.approvals.complete(approval.id, 'executed', result);
      expect(done).toMatchObject({ status: 'executed', result, decidedBy: 'alice', note: 'fine' });
      expect(await a.approvals.complete(approval.id, 'executed', result)).toBeUndefined();
      expect(await a.approvals.claim(approval.id, 'host-a')).toBeUndefined();
      expect(await a.approvals.decide(approval.id, 'deny', 'carol', null)).toMatchObject({
        kind: 'already_decided',
        approval: { status: 'executed' },
      });
    });

    it('expires an approval nobody decided in time, and refuses a late decision', async () => {
      const [store] = await twoHosts();
      const approval = await pending(store, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const late = await store.approvals.decide(approval.id, 'approve', 'alice', null);
      expect(late).toMatchObject({ kind: 'expired', approval: { status: 'expired', decidedBy: null } });
      expect(await store.approvals.claim(approval.id, 'host-a')).toBeUndefined();
      const other = await pending(store, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.approvals.expireDue()).toBeGreaterThanOrEqual(1);
      expect((await store.approvals.get(other.id))!.status).toBe('expired');
    });

    it('hands an approval whose deciding host stopped to exactly one sweeping host', async () => {
      const [a, b] = await twoHosts();
      const approval = await pending(a);
      await a.approvals.decide(approval.id, 'approve', 'alice', null);
      // Too recent: its own host may still claim it.
      expect(await b.approvals.claimOrphaned(60_000, 'host-b', 10)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const swept = await Promise.all([
        a.approvals.claimOrphaned(1, 'host-a', 10),
        b.approvals.claimOrphaned(1, 'host-b', 10),
      ]);
      expect(swept.flat().filter((s) => s.id === approval.id)).toHaveLength(1);
    });

    it('marks an execution whose host stopped as outcome unknown, and never runs it again', async () => {
      const [a] = await twoHosts();
      const approval = await pending(a);
      await a.approvals.decide(approval.id, 'approve', 'alice', null);
      await a.approvals.claim(approval.id, 'host-a');
      await new Promise((resolve) => setTimeout(resolve, 20));
      const abandoned = await a.approvals.abandonStale(1);
      expect(abandoned.map((x) => x.id)).toContain(approval.id);
      const after = (await a.approvals.get(approval.id))!;
      expect(after.status).toBe('outcome_unknown');
      expect(JSON.stringify(after.result)).toContain('OUTCOME_UNKNOWN');
      expect(await a.approvals.claim(approval.id, 'host-a')).toBeUndefined();
    });

    it('refuses what it must not store: an unbounded note, arguments that are not JSON, a silly expiry', async () => {
      const [store] = await twoHosts();
      const approval = await pending(store);
      await expect(store.approvals.decide(approval.id, 'deny', 'alice', 'x'.repeat(5000))).rejects.toThrow(
        /note is 5000 characters long; the limit is 2000/,
      );
      expect((await store.approvals.get(approval.id))!.status).toBe('pending');
      const base = { sessionId: null, toolName: 't', reason: 'r', requestedBy: null };
      await expect(store.approvals.create({ ...base, arguments: '{not json', ttlMs: 1000 })).rejects.toThrow(
        /arguments must be JSON text/,
      );
      await expect(store.approvals.create({ ...base, arguments: '{}', ttlMs: -1 })).rejects.toThrow(
        /ttlMs must be a whole number/,
      );
      expect(await store.approvals.decide('missing', 'approve', null, null)).toEqual({ kind: 'not_found' });
    });

    it("keeps the asking span's traceparent through every transition, for the host that decides to link to", async () => {
      const [a, b] = await twoHosts();
      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const base = {
        sessionId: null,
        toolName: 'testing_issue_refund',
        arguments: '{}',
        reason: 'r',
        requestedBy: null,
      };
      const asked = await a.approvals.create({ ...base, ttlMs: 60_000, traceparent });
      expect(asked.traceparent).toBe(traceparent);
      expect((await b.approvals.get(asked.id))!.traceparent).toBe(traceparent);
      const decided = await b.approvals.decide(asked.id, 'approve', 'alice', null);
      expect(decided).toMatchObject({ kind: 'decided', approval: { traceparent } });
      expect((await b.approvals.claim(asked.id, 'host-b'))!.traceparent).toBe(traceparent);
      expect((await b.approvals.complete(asked.id, 'executed', null))!.traceparent).toBe(traceparent);
      // Untraced callers store none.
      expect((await a.approvals.create({ ...base, ttlMs: 60_000 })).traceparent).toBeNull();
      expect((await a.approvals.create({ ...base, ttlMs: 60_000, traceparent: null })).traceparent).toBeNull();
    });

    it('refuses a traceparent that is not a W3C one, naming the field and the form', async () => {
      const [store] = await twoHosts();
      const base = { sessionId: null, toolName: 't', arguments: '{}', reason: 'r', requestedBy: null, ttlMs: 1000 };
      for (const bad of [
        'not-a-traceparent',
        '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01',
        `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
        `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01`,
        '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      ])
        await expect(store.approvals.create({ ...base, traceparent: bad })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringContaining('is not a W3C traceparent: give 00-<32 hex digits of trace id>'),
        });
      expect(await store.approvals.list({ limit: 1000 })).toEqual([]);
    });
  });
}
