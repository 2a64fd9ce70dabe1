/**
 * @aptix/tool-mode-change: the agent_change_mode tool (TUL-007), which changes the current agent
 * session's mode. Everything exported here is public API.
 */
import type { ToolList } from '@aptix/tool-contract';
import { ModeChangeTool } from './mode-change.tool.js';

export {
  ModeChangeLogTag,
  ModeChangeMessage,
  ModeChangeTool,
  type ModeChangeResult,
  type ModeChangeToolDependencies,
} from './mode-change.tool.js';

/** The tools this package contributes to a host. */
export const tools = [ModeChangeTool] as const satisfies ToolList;
