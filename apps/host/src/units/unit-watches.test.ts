import { defineResource, ResourceRegistry } from '@aptix/tool-contract';
import { describe, expect, it } from 'vitest';
import { UnitWatches } from './unit-watches.js';

/** A subscribable resource whose package holds the `changed` functions the host gave it. */
function counter() {
  const changed = new Set<() => void>();
  const stopped: string[] = [];
  const registry = new ResourceRegistry();
  registry.register(
    defineResource({
      name: 'acme_counter',
      uriTemplate: 'acme://counters/{id}',
      mimeType: 'text/plain',
      read: () => '0',
      subscribe: (uri, notify) => {
        changed.add(notify);
        return () => {
          changed.delete(notify);
          stopped.push(uri);
        };
      },
    }),
  );
  registry.register(
    defineResource({ name: 'acme_plain', uri: 'acme://plain', mimeType: 'text/plain', read: () => 'x' }),
  );
  const watches = new UnitWatches((uri) => registry.resolve(uri)?.resource);
  return { watches, changed, stopped };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('UnitWatches', () => {
  it('starts the package hook once per URI, stops it when the last subscriber leaves, and tolerates a second release', () => {
    const { watches, changed, stopped } = counter();
    const first = watches.watch('acme://counters/a');
    const second = watches.watch('acme://counters/a');
    expect(changed.size).toBe(1);
    if (!('release' in first) || !('release' in second)) throw new Error('not watched');
    first.release();
    first.release();
    expect(stopped).toEqual([]);
    second.release();
    expect(stopped).toEqual(['acme://counters/a']);
  });

  it('refuses a resource without a subscribe hook, and one not there, saying which', () => {
    const { watches } = counter();
    expect(watches.watch('acme://plain')).toEqual({
      error: 'Resource "acme://plain" cannot be subscribed to: resource "acme_plain" declares no subscribe hook.',
    });
    expect(watches.watch('acme://nothing')).toMatchObject({
      error: expect.stringMatching(/no resource is at that URI/),
    });
  });

  it('tells one update per URI and turn, however often the package calls changed(), and none after the watch ended', async () => {
    const { watches, changed } = counter();
    const heard: string[] = [];
    watches.onUpdated((uri) => heard.push(uri));
    const watched = watches.watch('acme://counters/a');
    for (let i = 0; i < 10_000; i++) for (const notify of changed) notify();
    await turn();
    expect(heard).toEqual(['acme://counters/a']);
    const [notify] = [...changed];
    if ('release' in watched) watched.release();
    notify!();
    await turn();
    expect(heard).toEqual(['acme://counters/a']);
  });

  it('keeps telling the other listeners when one throws, and a hook that throws fails that subscription only', async () => {
    const registry = new ResourceRegistry();
    registry.register(
      defineResource({
        name: 'acme_broken',
        uri: 'acme://broken',
        mimeType: 'text/plain',
        read: () => 'x',
        subscribe: () => {
          throw new Error('no watcher today');
        },
      }),
    );
    const watches = new UnitWatches((uri) => registry.resolve(uri)?.resource);
    expect(watches.watch('acme://broken')).toEqual({
      error: 'Resource "acme_broken" could not start watching acme://broken: no watcher today.',
    });
    const { watches: good, changed } = counter();
    const heard: string[] = [];
    good.onUpdated(() => {
      throw new Error('a surface failed');
    });
    good.onUpdated((uri) => heard.push(uri));
    good.watch('acme://counters/b');
    for (const notify of changed) notify();
    await turn();
    expect(heard).toEqual(['acme://counters/b']);
  });
});
