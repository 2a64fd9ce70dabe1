/**
 * The host under concurrency and crashes, on SQLite and PostgreSQL (issue 9): hundreds of concurrent
 * mode changes on one session through HTTP lose none, and kill -9 in the middle of a burst of mode
 * changes keeps every acknowledged change after a restart, with the history's chain unbroken.
 * No assertion is about time: waits are bounded only so that a broken host fails instead of hanging.
 */
import { SqliteDatabase as Database } from '@aptix/agent-sessions/sqlite';
import { describe, expect, it } from 'vitest';
import { postJson, storeBackends } from './suites.js';
import { scratch, startHost, type RunningHost } from './support.js';

const MODES = ['general', 'ddr_authoring', 'tool_diagnostics'];

async function changeMode(
  host: RunningHost,
  sessionId: string,
  mode: string,
  reason: string,
): Promise<{ status: number; body: any }> {
  return postJson(host, '/v1/tools/agent_change_mode/invoke', {
    arguments: { mode, branch: false, reason },
    context: { sessionId },
  });
}

function expectUnbrokenChain(session: { mode: string; history: Array<{ fromMode: string; toMode: string }> }): void {
  let previous = 'general';
  session.history.forEach((change, index) => {
    expect(change.fromMode, `history[${index}] does not start where history[${index - 1}] ended`).toBe(previous);
    previous = change.toMode;
  });
  expect(session.mode).toBe(previous);
}

async function sessionView(host: RunningHost, id: string) {
  // One page holds the whole history these tests make (200 changes; the default page is 100).
  return (await (await fetch(`${host.url}/v1/sessions/${id}?limit=1000`)).json()) as {
    mode: string;
    history: Array<{ fromMode: string; toMode: string; reason: string }>;
  };
}

for (const store of await storeBackends('aptix_robust', 'the PostgreSQL robustness tests are')) {
  describe(`${store.name}: concurrent mode changes and a crash, over HTTP`, () => {
    it('loses none of 200 concurrent mode changes on one session through the host', async () => {
      const database = store.setup();
      const host = await startHost({ env: { APTIX_DB: database.db } });
      try {
        const { id } = (await postJson(host, '/v1/sessions')).body as { id: string };
        const answers = await Promise.all(
          Array.from({ length: 200 }, (_, i) => changeMode(host, id, MODES[(i * 5) % 3]!, `concurrent ${i}`)),
        );
        for (const answer of answers)
          expect(answer.body).toMatchObject({ successful: true, result: { success: true } });
        const session = await sessionView(host, id);
        expect(session.history).toHaveLength(200);
        expect(new Set(session.history.map((change) => change.reason))).toEqual(
          new Set(Array.from({ length: 200 }, (_, i) => `concurrent ${i}`)),
        );
        expectUnbrokenChain(session);
      } finally {
        await host.stop();
        await database.dispose();
      }
    });

    it('keeps every acknowledged mode change when the host is killed with SIGKILL in the middle of a burst', async () => {
      const database = store.setup();
      const dir = scratch();
      try {
        const first = await startHost({ env: { APTIX_DB: database.db }, cwd: dir.dir });
        const { id } = (await postJson(first, '/v1/sessions')).body as { id: string };
        const acknowledged: string[] = [];
        let next = 0;
        let killed = false;
        // 8 clients change the mode back to back; once 40 changes are acknowledged, the host is killed
        // mid-flight, with requests still on the wire.
        const client = async () => {
          while (!killed || first.child.exitCode === null) {
            const reason = `burst ${next++}`;
            let answer: { body: any };
            try {
              answer = await changeMode(first, id, MODES[next % 3]!, reason);
            } catch {
              return; // the connection died with the host
            }
            if (answer.body?.successful === true) acknowledged.push(reason);
            if (acknowledged.length >= 40 && !killed) {
              killed = true;
              first.child.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, client));
        expect(await first.stop()).toBeNull(); // it died of the signal, not by exiting
        expect(first.child.signalCode).toBe('SIGKILL');
        expect(acknowledged.length).toBeGreaterThanOrEqual(40);

        if (store.name === 'SQLite') {
          const file = database.db.slice('sqlite:'.length);
          const db = new Database(file);
          try {
            expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
          } finally {
            db.close();
          }
        }
        const second = await startHost({ env: { APTIX_DB: database.db }, cwd: dir.dir });
        try {
          const session = await sessionView(second, id);
          const stored = new Set(session.history.map((change) => change.reason));
          for (const reason of acknowledged)
            expect(stored.has(reason), `acknowledged change "${reason}" is missing after the restart`).toBe(true);
          expectUnbrokenChain(session);
          // The store takes new changes after the crash, continuing from the mode it recovered.
          expect((await changeMode(second, id, 'ddr_authoring', 'after the crash')).body).toMatchObject({
            successful: true,
          });
          expectUnbrokenChain(await sessionView(second, id));
        } finally {
          await second.stop();
        }
      } finally {
        await database.dispose();
        dir.cleanup();
      }
    });
  });
}
