/**
 * `createUnits`: a package's prompts and resources known only at start-up (a bridged server's). The
 * loader runs it after `createTools` with the same host object, under the same time limit, and refuses
 * what is not `{ prompts?: [...], resources?: [...] }` with a message naming the package and the fix.
 */
import { describe, expect, it } from 'vitest';
import { setUpToolPackage } from '../src/tool-packages.js';

const who = { specifier: 'acme-units', name: 'acme-units', entry: '/nowhere/index.js' };
const host = { logger: undefined, options: {} } as never;
const prompt = { kind: 'prompt', name: 'acme_p', description: 'A prompt.', render: () => 'hi' };
const resource = { kind: 'resource', name: 'acme_r', uri: 'acme://r', mimeType: 'text/plain', read: () => 'r' };

describe('createUnits', () => {
  it('adds its prompts and resources after the static ones, called after createTools with the same host', async () => {
    const order: string[] = [];
    const hosts: unknown[] = [];
    const set = await setUpToolPackage(
      {
        tools: [],
        prompts: [{ ...prompt, name: 'acme_static' }],
        createTools: (given: unknown) => (order.push('createTools'), hosts.push(given), []),
        createUnits: async (given: unknown) => (
          order.push('createUnits'),
          hosts.push(given),
          { prompts: [prompt], resources: [resource] }
        ),
      } as never,
      who,
      host,
      1000,
    );
    expect(order).toEqual(['createTools', 'createUnits']);
    expect(hosts[0]).toBe(hosts[1]);
    expect(set.prompts.map((unit) => (unit as { name: string }).name)).toEqual(['acme_static', 'acme_p']);
    expect(set.resources).toEqual([resource]);
  });

  it('refuses a result that is not { prompts?, resources? }, a hook that is not a function, and one that hangs', async () => {
    const run = (module: object, limitMs = 1000) =>
      setUpToolPackage({ tools: [], ...module } as never, who, host, limitMs);
    for (const made of ['units', [prompt], null, 42])
      await expect(run({ createUnits: () => made })).rejects.toThrow(
        /createUnits\(\) returned .*; it must return \{ prompts\?: \[\.\.\.\], resources\?: \[\.\.\.\] \}/,
      );
    await expect(run({ createUnits: () => ({ prompts: 'all of them' }) })).rejects.toThrow(
      /createUnits\(\) returned prompts as/,
    );
    await expect(run({ createUnits: 'soon' })).rejects.toThrow(/exports `createUnits` but it is .*not a function/);
    await expect(run({ createUnits: () => new Promise(() => undefined) }, 50)).rejects.toThrow(
      /createUnits\(\) did not finish within 50 ms/,
    );
  });
});
