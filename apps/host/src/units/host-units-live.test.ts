import { Writable } from 'node:stream';
import { pino } from 'pino';
import { AgentToolRegistry, definePrompt, defineResource, type PackageUnits } from '@aptix/tool-contract';
import { loadModeCatalogSync } from '@aptix/tool-mode-catalog';
import { describe, expect, it } from 'vitest';
import { MIN_GAP_MS } from '../change-bell.js';
import { UnitFollower } from '../live-units.js';
import type { LoadedToolPackage } from '../tool-packages.js';
import { HostUnits, type UnitScope } from './host-units.js';

/**
 * Prompts and resources that change while the host runs (`ToolPackageHost.unitsChanged`), through the
 * real contract registries, catalog and log: what a package reports is checked as at start-up, applied
 * in one step, and what it withdraws answers why.
 */
function harness(first: PackageUnits, other: PackageUnits = {}) {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const loaded = (name: string, units: PackageUnits): LoadedToolPackage => ({
    specifier: name,
    name,
    version: '1.0.0',
    entry: name,
    folder: name,
    tools: [],
    prompts: units.prompts ?? [],
    resources: units.resources ?? [],
    dependencies: {},
    isolation: 'none',
    close: async () => undefined,
  });
  const follower = new UnitFollower(logger);
  const report = follower.watch();
  const live = loaded('@acme/live', first);
  follower.loaded(live);
  const { units } = HostUnits.compose(
    [live, loaded('@acme/other', other)],
    new AgentToolRegistry(),
    loadModeCatalogSync(),
  );
  const scope: UnitScope = { mode: 'general', toolNames: [], mayUse: () => true, mayUseMode: () => true };
  const heard: string[][] = [];
  units.onChange((kinds) => heard.push([...kinds]));
  const names = () => ({
    prompts: units.promptsIn(scope).map((prompt) => prompt.name),
    resources: units.resourcesIn(scope).map((resource) => resource.uri),
  });
  return { units, report, follower, scope, heard, names, lines, messages: () => lines.map((line) => line.msg) };
}

/** Lets the change bell ring: it tells at the end of the turn, and at most once per MIN_GAP_MS. */
const told = () => new Promise((resolve) => setTimeout(resolve, MIN_GAP_MS + 10));

const prompt = (name: string) => definePrompt({ name, description: `The prompt ${name}.`, render: () => `${name}!` });
const resource = (name: string, extra: object = {}) =>
  defineResource({ name, uri: `acme://${name}`, mimeType: 'text/plain', read: () => `${name} read`, ...extra });

describe('a package that changes its prompts and resources while the host runs', () => {
  it('adds a prompt and withdraws a resource in one step; a get or read of what went says why', async () => {
    const greet = prompt('acme_greet');
    const notes = resource('acme_notes');
    const { units, report, heard, names, scope, follower } = harness({
      prompts: [greet],
      resources: [notes, resource('acme_extra')],
    });
    expect(units.mayChange).toBe(true);
    expect(follower.watched).toBe(true);
    const before = { prompts: units.revision('prompt'), resources: units.revision('resource') };
    report({ prompts: [greet, prompt('acme_briefing')], resources: [notes] });
    expect(names().prompts).toEqual(expect.arrayContaining(['acme_greet', 'acme_briefing']));
    expect(names().resources).toContain('acme://acme_notes');
    expect(names().resources).not.toContain('acme://acme_extra');
    expect(heard).toEqual([]); // told when the turn ends
    await told();
    expect(heard).toEqual([['prompt', 'resource']]);
    expect(units.revision('prompt')).toBe(before.prompts + 1);
    expect(units.revision('resource')).toBe(before.resources + 1);
    const rendered = await units.render('acme_briefing', {}, scope);
    expect(rendered).toMatchObject({ ok: true });
    const gone = await units.read('acme://acme_extra', scope);
    expect(gone).toMatchObject({ ok: false, code: 'RESOURCE_NOT_FOUND' });
    expect(gone.ok ? '' : gone.message).toContain(
      'Resource "acme_extra" from "@acme/live" is no longer offered: the package withdrew it while the host runs',
    );
    // The same lists again change nothing, and tell no one.
    report({
      prompts: [
        greet,
        ...units.prompts
          .list()
          .filter((p) => p.name === 'acme_briefing')
          .map((p) => p.prompt),
      ],
    });
    await told();
    expect(heard).toHaveLength(1);
    // A kind left out stays as it is.
    report({ prompts: [greet] });
    expect(names().resources).toContain('acme://acme_notes');
    await told();
    expect(heard.at(-1)).toEqual(['prompt']);
    const withdrawn = await units.render('acme_briefing', {}, scope);
    expect(withdrawn.ok ? '' : withdrawn.message).toContain(
      'Prompt "acme_briefing" from "@acme/live" is no longer offered',
    );
  });

  it("refuses, with the reason in the log, a unit that breaks the contract and a name or URI another package or the host holds; the rest are offered and the others' units keep serving", async () => {
    const theirs = prompt('acme_shared');
    const { units, report, names, messages, scope } = harness(
      {},
      { prompts: [theirs], resources: [resource('acme_held')] },
    );
    report({
      prompts: [
        definePrompt({ name: 'Bad Name!', description: 'x', render: () => 'x' }),
        prompt('acme_shared'),
        prompt('aptix_modes_prompt'),
      ],
      resources: [
        defineResource({ name: 'acme_thief', uri: 'acme://acme_held', mimeType: 'text/plain', read: () => 'stolen' }),
        defineResource({ name: 'aptix_modes', uri: 'acme://modes', mimeType: 'text/plain', read: () => 'x' }),
        resource('acme_fine'),
      ],
    });
    expect(names().prompts).toContain('aptix_modes_prompt');
    expect(units.promptsIn(scope).filter((listed) => listed.name === 'acme_shared')).toEqual([
      units.prompts.get('acme_shared'),
    ]);
    expect(units.prompts.get('acme_shared')!.prompt).toBe(theirs);
    expect(names().resources).toEqual(
      expect.arrayContaining(['acme://acme_fine', 'acme://acme_held', 'aptix://modes']),
    );
    expect(names().resources).not.toContain('acme://modes');
    const log = messages().join('\n');
    expect(log).toMatch(
      /Prompt "Bad Name!" from "@acme\/live" is not offered: it breaks the contract \(UNIT_NAME_INVALID\)/,
    );
    expect(log).toContain(
      'Prompt "acme_shared" from "@acme/live" is not offered: it breaks the contract (DUPLICATE_PROMPT)',
    );
    expect(log).toContain(
      'Resource "acme_thief" from "@acme/live" is not offered: it breaks the contract (DUPLICATE_RESOURCE)',
    );
    expect(log).toContain('Resource "aptix_modes" from "@acme/live" is not offered');
    expect(await units.read('acme://acme_held', scope)).toMatchObject({ ok: true });
    expect(await units.render('acme_shared', {}, scope)).toMatchObject({ ok: true });
    // Reported again unchanged, a refusal is not logged again.
    const count = messages().length;
    report({ prompts: [prompt('acme_shared')] });
    expect(
      messages()
        .slice(count)
        .filter((line) => line.includes('acme_shared')),
    ).toHaveLength(0);
  });

  it('a package reporting 10,000 lists in one turn: the last applies, listeners hear once', async () => {
    const greet = prompt('acme_greet');
    const briefing = prompt('acme_briefing');
    const { report, names, heard } = harness({ prompts: [greet] });
    for (let i = 0; i < 10_000; i++) report({ prompts: i % 2 === 0 ? [greet, briefing] : [greet] });
    report({ prompts: [briefing], resources: [resource('acme_notes')] });
    expect(names().prompts).toContain('acme_briefing');
    expect(names().prompts).not.toContain('acme_greet');
    expect(names().resources).toContain('acme://acme_notes');
    await told();
    expect(heard).toEqual([['prompt', 'resource']]);
  });

  it('a report the host cannot read is logged and changes nothing; the host keeps serving', async () => {
    const { report, names, messages, heard } = harness({ prompts: [prompt('acme_greet')] });
    const before = names();
    for (const garbage of [
      null,
      42,
      { prompts: 'all of them' },
      {
        get prompts(): never {
          throw new Error('trap');
        },
      },
    ])
      expect(() => report(garbage as never)).not.toThrow();
    expect(names()).toEqual(before);
    await told();
    expect(heard).toEqual([]);
    expect(
      messages().filter((line) => line.includes('reported changed prompts or resources the host cannot read')),
    ).toHaveLength(4);
  });

  it('applies a list reported before the catalog was composed, once it is', () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }),
    );
    const follower = new UnitFollower(logger);
    follower.watch()({ prompts: [prompt('acme_early')] });
    const live: LoadedToolPackage = {
      specifier: 'early',
      name: 'early',
      version: undefined,
      entry: 'early',
      folder: 'early',
      tools: [],
      prompts: [],
      resources: [],
      dependencies: {},
      isolation: 'none',
      close: async () => undefined,
    };
    follower.loaded(live);
    const { units } = HostUnits.compose([live], new AgentToolRegistry(), loadModeCatalogSync());
    expect(units.prompts.has('acme_early')).toBe(true);
  });
});

describe('subscriptions across a change', () => {
  /** A subscribable resource whose hook records what it starts and stops. */
  const watched = (name: string, log: string[]) =>
    resource(name, {
      subscribe: (uri: string) => {
        log.push(`start ${name} ${uri}`);
        return () => log.push(`stop ${name} ${uri}`);
      },
    });

  it('moves a watch to the new definition of its URI (started before the old one stops), and ends it, with one last update, when the resource is withdrawn', () => {
    const hooks: string[] = [];
    const { units, report } = harness({ resources: [watched('acme_counter', hooks)] });
    const updates: string[] = [];
    units.watches.onUpdated((uri) => updates.push(uri));
    const watch = units.watches.watch('acme://acme_counter');
    expect('release' in watch).toBe(true);
    report({ resources: [watched('acme_counter', hooks)] });
    expect(hooks).toEqual([
      'start acme_counter acme://acme_counter',
      'start acme_counter acme://acme_counter',
      'stop acme_counter acme://acme_counter',
    ]);
    expect(units.watches.watching('acme://acme_counter')).toBe(true);
    expect(updates).toEqual([]);
    report({ resources: [] });
    expect(hooks.at(-1)).toBe('stop acme_counter acme://acme_counter');
    expect(units.watches.watching('acme://acme_counter')).toBe(false);
    expect(updates).toEqual(['acme://acme_counter']);
    // The subscriber's release after the end stops nothing twice, and a new subscriber of a URI served again starts afresh.
    const stops = hooks.filter((line) => line.startsWith('stop')).length;
    if ('release' in watch) watch.release();
    expect(hooks.filter((line) => line.startsWith('stop')).length).toBe(stops);
  });
});
