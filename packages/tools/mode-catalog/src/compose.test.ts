import { describe, expect, it } from 'vitest';
import { sampleModes } from '../test/modes.fixture.js';
import {
  composeModeCatalog,
  loadModeCatalog,
  ModeCatalog,
  ModeCatalogError,
  ModeCatalogErrorCode,
  toolsInNoMode,
} from './index.js';

const base = () => ModeCatalog.fromModes(sampleModes(), 'modes.json');

function thrown(fn: () => unknown): ModeCatalogError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModeCatalogError);
    return error as ModeCatalogError;
  }
  throw new Error('expected a ModeCatalogError');
}

describe('composeModeCatalog', () => {
  it('returns the catalog itself when nothing changes it', () => {
    const catalog = base();
    expect(
      composeModeCatalog(catalog, [
        { source: 'aptix.config.json' },
        { source: 'tool package "x"', extend: {}, add: [] },
      ]),
    ).toEqual({ catalog, warnings: [] });
  });

  it('adds tools to a shipped mode after its own, once, and leaves the other modes and the base catalog alone', () => {
    const catalog = base();
    const { catalog: composed, warnings } = composeModeCatalog(catalog, [
      {
        source: 'tool package "@acme/weather-tools"',
        extend: { general: ['acme_convert_temperature', 'agent_hello_world'] },
      },
      { source: 'aptix.config.json', extend: { general: ['acme_convert_temperature', 'acme_forecast'] } },
    ]);
    expect(warnings).toEqual([]);
    expect(composed.requireMode('general').tools).toEqual([
      'agent_hello_world',
      'acme_convert_temperature',
      'acme_forecast',
    ]);
    expect(composed.requireMode('ddr_authoring')).toEqual(catalog.requireMode('ddr_authoring'));
    expect(catalog.requireMode('general').tools).toEqual(['agent_hello_world']);
    expect(composed.keys).toEqual(['general', 'ddr_authoring']);
    expect(composed.defaultMode.key).toBe('general');
    expect(Object.isFrozen(composed.requireMode('general').tools)).toBe(true);
    expect(composed.source).toBe(
      'modes.json with additions from tool package "@acme/weather-tools", aptix.config.json',
    );
  });

  it('adds a mode, with an id derived from its key when none is given, which a tool package can then join', () => {
    const add = [
      {
        key: 'weather',
        displayName: 'Weather',
        description: 'Forecasts and unit conversions.',
        tools: ['acme_forecast'],
      },
    ];
    const { catalog } = composeModeCatalog(base(), [
      {
        source: 'tool package "@acme/weather-tools"',
        extend: { weather: ['acme_convert_temperature'] },
        unknownMode: 'warning',
      },
      { source: 'aptix.config.json', add },
    ]);
    const weather = catalog.requireMode('weather');
    expect(weather).toMatchObject({
      key: 'weather',
      isDefault: false,
      systemPromptSummary: '',
      tools: ['acme_forecast', 'acme_convert_temperature'],
    });
    expect(weather.id).toMatch(/^[0-9a-f]{32}$/);
    expect(composeModeCatalog(base(), [{ source: 'again', add }]).catalog.requireMode('weather').id).toBe(weather.id);
    expect(catalog.keys).toEqual(['general', 'ddr_authoring', 'weather']);
  });

  it("refuses a configuration's extension of a mode the catalog does not have, listing the modes", () => {
    const error = thrown(() =>
      composeModeCatalog(base(), [{ source: 'aptix.config.json', extend: { genral: ['acme_forecast'] } }]),
    );
    expect(error.code).toBe(ModeCatalogErrorCode.UNKNOWN_MODE);
    expect(error.message).toBe(
      'aptix.config.json adds tools to mode "genral", which the catalog does not have. Valid modes: general, ddr_authoring. Fix: use one of them, or add the mode under "add".',
    );
  });

  it("only warns when a tool package asks to join a mode this host lacks: the package cannot know every host's modes", () => {
    const { catalog, warnings } = composeModeCatalog(base(), [
      { source: 'tool package "@acme/weather-tools"', extend: { research: ['acme_forecast'] }, unknownMode: 'warning' },
    ]);
    expect(catalog.keys).toEqual(['general', 'ddr_authoring']);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^tool package "@acme\/weather-tools" adds "acme_forecast" to mode "research", which this host's catalog does not have \(modes: general, ddr_authoring\), so it joins no mode there\. Fix: /,
      ),
    ]);
  });

  it('checks an added mode as a catalog file is checked: a duplicate key, a second default', () => {
    const duplicate = thrown(() =>
      composeModeCatalog(base(), [
        { source: 'aptix.config.json', add: [{ key: 'general', displayName: 'G', description: 'Again.', tools: [] }] },
      ]),
    );
    expect(duplicate.code).toBe(ModeCatalogErrorCode.DUPLICATE_MODE_KEY);
    const twoDefaults = thrown(() =>
      composeModeCatalog(base(), [
        {
          source: 'aptix.config.json',
          add: [{ key: 'other', displayName: 'O', description: 'Other.', isDefault: true, tools: [] }],
        },
      ]),
    );
    expect(twoDefaults.code).toBe(ModeCatalogErrorCode.MULTIPLE_DEFAULT_MODES);
    expect(twoDefaults.message).toContain('exactly one mode may be the default');
  });
});

describe('toolsInNoMode', () => {
  it('lists the tools no mode offers, leaving out the always-offered ones', async () => {
    const catalog = await loadModeCatalog();
    expect(
      toolsInNoMode(
        ['agent_hello_world', 'agent_change_mode', 'agent_list_modes', 'acme_convert_temperature'],
        catalog,
      ),
    ).toEqual(['acme_convert_temperature']);
  });
});
