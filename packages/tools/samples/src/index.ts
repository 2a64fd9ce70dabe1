/**
 * @aptix/tool-samples: the reference tools of TUL-011 and AGN-005, the examples a new tool author
 * copies. Everything exported here is public API.
 */
import type { ToolList } from '@aptix/tool-contract';
import { CalculatorTool } from './calculator.tool.js';
import { DelayTool } from './delay.tool.js';
import { FailureInjectionTool } from './failure-injection.tool.js';
import { HelloWorldTool } from './hello-world.tool.js';
import { IssueRefundTool, REFUND_APPROVAL_THRESHOLD } from './issue-refund.tool.js';
import { PingPongTool } from './ping-pong.tool.js';

export {
  CalculatorTool,
  DelayTool,
  FailureInjectionTool,
  HelloWorldTool,
  IssueRefundTool,
  PingPongTool,
  REFUND_APPROVAL_THRESHOLD,
};

/** Every tool of this package, in the order a host registers them. */
export const tools = [
  HelloWorldTool,
  PingPongTool,
  CalculatorTool,
  DelayTool,
  FailureInjectionTool,
  IssueRefundTool,
] as const satisfies ToolList;
