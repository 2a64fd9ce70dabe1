/**
 * Run in a fresh process: AgentToolExecutor.execute against the bare baseline, either in a process that
 * never uses an AsyncLocalStorage or entirely inside `AsyncLocalStorage.run` (argument `als`). On Node 20
 * the first `run()` switches on promise hooks for the whole process, for good, so this cannot be measured
 * in the main bench process without slowing everything timed after it. Prints { bare, execute } in ns.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { AgentToolExecutor, AgentToolRegistry } from '@aptix/tool-contract';
import { PingPongTool } from '@aptix/tool-samples';
import { CONTEXT, PING_JSON, pong } from '../fixtures.js';
import { compare } from '../harness.js';

const registry = new AgentToolRegistry();
registry.registerTool(PingPongTool);
const executor = new AgentToolExecutor({ registry });
const storage = process.argv[2] === 'als' ? new AsyncLocalStorage<{ reqId: string }>() : undefined;
let sink: unknown;

const within = <T>(work: () => T): T => (storage ? storage.run({ reqId: 'r-1' }, work) : work());
const timings = await within(() =>
  compare(
    [
      {
        name: 'bare',
        run(n) {
          for (let i = 0; i < n; i++) sink = JSON.stringify(pong(JSON.parse(PING_JSON), CONTEXT));
        },
      },
      {
        name: 'execute',
        async run(n) {
          for (let i = 0; i < n; i++) sink = await executor.execute('testing_ping_pong', PING_JSON, CONTEXT);
        },
      },
    ],
    { rounds: 11, roundMs: 50 },
  ),
);
void sink;
process.stdout.write(`${JSON.stringify({ bare: timings[0]!.nsPerOp, execute: timings[1]!.nsPerOp })}\n`);
