import { describe, expect, it } from 'vitest';
import * as entry from './index.js';

describe('the package entry', () => {
  it('exports exactly its public API: a change here is a change for every user', () => {
    expect(Object.keys(entry).sort()).toEqual([
      'ALWAYS_OFFERED_TOOLS',
      'ALWAYS_OFFERED_TOOL_PACKAGES',
      'AgentModeSummary',
      'ListModesErrorCode',
      'ListModesTool',
      'MODE_ID_PATTERN',
      'MODE_KEY_MAX_LENGTH',
      'MODE_KEY_PATTERN',
      'ModeCatalog',
      'ModeCatalogChanges',
      'ModeCatalogError',
      'ModeCatalogErrorCode',
      'ModeCatalogFile',
      'ModeToAdd',
      'checkCatalogAgainstRegistry',
      'composeModeCatalog',
      'defaultCatalogPath',
      'loadModeCatalog',
      'loadModeCatalogSync',
      'toolNamesForMode',
      'toolNotInModeMessage',
      'tools',
      'toolsInNoMode',
    ]);
  });

  it('lists agent_list_modes as the package tool', () => {
    expect(entry.tools.map((tool) => tool.ToolName)).toEqual(['agent_list_modes']);
  });

  it('keeps every error code equal to its name, so codes are stable strings', () => {
    for (const codes of [entry.ModeCatalogErrorCode, entry.ListModesErrorCode]) {
      for (const [name, code] of Object.entries(codes)) expect(code).toBe(name);
    }
  });
});
