import { describe, expect, it } from 'vitest';
import * as entry from './index.js';

describe('the package entry', () => {
  it('exports exactly its public API: a change here is a change for every user', () => {
    expect(Object.keys(entry).sort()).toEqual(['ModeChangeLogTag', 'ModeChangeMessage', 'ModeChangeTool', 'tools']);
  });

  it('lists agent_change_mode as the package tool', () => {
    expect(entry.tools.map((tool) => tool.ToolName)).toEqual(['agent_change_mode']);
  });
});
