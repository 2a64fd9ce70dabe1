import { describe, expect, it } from 'vitest';
import { StandInCalledError, withStandIns } from './stand-ins.js';

describe('withStandIns', () => {
  it('passes provided dependencies through and stands in for the rest, recording their names', () => {
    const logger = { name: 'logger' };
    const { dependencies, standIns } = withStandIns('kit_tool', { logger });
    expect(dependencies.logger).toBe(logger);
    const catalog = dependencies.catalog as { getAll: () => unknown };
    expect(typeof catalog).toBe('object');
    expect(typeof catalog.getAll).toBe('function');
    expect(dependencies.catalog).toBe(catalog);
    expect('sessionManager' in dependencies).toBe(true);
    expect([...standIns]).toEqual(['catalog']);
  });

  it('throws a StandInCalledError naming the tool, the call and the fix when a stand-in is used', () => {
    const { dependencies } = withStandIns('kit_tool', {});
    const catalog = dependencies.catalog as { modes: { getAll: () => unknown } };
    expect(() => catalog.modes.getAll()).toThrow(StandInCalledError);
    expect(() => catalog.modes.getAll()).toThrow(
      /^kit_tool called catalog\.modes\.getAll\(\), but 'catalog' is a stand-in: the contract kit stands in for dependencies nobody provided\. Provide a real one or a fake/,
    );
  });

  it('is neither a thenable nor serialised as anything but {}', async () => {
    const { dependencies } = withStandIns('kit_tool', {});
    expect(await Promise.resolve(dependencies.client)).toBe(dependencies.client);
    expect(JSON.stringify(dependencies.client)).toBe('{}');
    expect(`${String(dependencies.client)}`).toBe('[stand-in for client]');
    expect((dependencies as { then?: unknown }).then).toBeUndefined();
  });
});
