import { describe, expect, it } from 'vitest';
import { AgentToolExecutor, AgentToolRegistry, missingUsageSections } from '@aptix/tool-contract';
import { CapturingAdminLogger, ContractCheckCode, verifyToolContract } from '@aptix/tool-contract/testing';
import * as entry from './index.js';
import {
  CalculatorTool,
  DelayTool,
  FailureInjectionTool,
  HelloWorldTool,
  IssueRefundTool,
  PingPongTool,
  tools,
} from './index.js';

describe('@aptix/tool-samples entry', () => {
  it('exports the six tool classes, the refund threshold and the tools list, and nothing else', () => {
    expect(Object.keys(entry).sort()).toEqual([
      'CalculatorTool',
      'DelayTool',
      'FailureInjectionTool',
      'HelloWorldTool',
      'IssueRefundTool',
      'PingPongTool',
      'REFUND_APPROVAL_THRESHOLD',
      'tools',
    ]);
    expect(tools).toEqual([
      HelloWorldTool,
      PingPongTool,
      CalculatorTool,
      DelayTool,
      FailureInjectionTool,
      IssueRefundTool,
    ]);
  });

  it('registers every tool in an AgentToolRegistry without a contract violation', () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    expect(() => registry.registerTools(tools)).not.toThrow();
    expect(registry.names()).toEqual([
      'agent_hello_world',
      'testing_ping_pong',
      'testing_calculator',
      'testing_delay',
      'testing_failure_injection',
      'testing_issue_refund',
    ]);
    expect(logger.entries).toEqual([]);
  });

  it('runs a tool registered from the list through the executor (the README example)', async () => {
    const logger = new CapturingAdminLogger();
    const registry = new AgentToolRegistry({ logger });
    registry.registerTools(tools);
    const executor = new AgentToolExecutor({ registry, logger });
    const result = await executor.execute('testing_calculator', '{"operation":"divide","a":6,"b":3}', {
      sessionId: 's-1',
      conversationId: 'c-1',
    });
    expect(result).toEqual({
      successful: true,
      result: '{"value":2,"expression":"6 / 3 = 2","sessionId":"s-1","conversationId":"c-1"}',
      errors: [],
    });
  });
});

describe.each(tools.map((tool) => [tool.ToolName, tool] as const))('%s', (name, tool) => {
  const registered = new AgentToolRegistry().registerTool(tool);

  it('is offered to OpenAI in strict mode: its schema needs no opt-out', () => {
    expect(registered.strictView.problems).toEqual([]);
    expect(registered.strict).toBe(true);
  });

  it('has usage metadata in the AGN-005 §7.2.2 format, titled with its name', () => {
    expect(tool.ToolUsageMetadata.split('\n')[0]).toBe(`${name} — Usage Guide`);
    expect(missingUsageSections(tool.ToolUsageMetadata)).toEqual([]);
  });

  it('explains every argument of its schema in its usage metadata (AGN-005 §7.2.3: kept in sync)', () => {
    for (const argument of Object.keys(registered.parameters.properties as object)) {
      expect(tool.ToolUsageMetadata).toMatch(new RegExp(`^- ${argument} \\((required|optional)\\):`, 'm'));
    }
  });
});

describe('usage metadata', () => {
  it.each([
    [HelloWorldTool.ToolName, HelloWorldTool, ['INVALID_ARGUMENTS', 'TOOL_EXCEPTION', 'TIMEOUT']],
    [PingPongTool.ToolName, PingPongTool, ['INVALID_ARGUMENTS', 'TOOL_EXCEPTION', 'TIMEOUT']],
    [
      CalculatorTool.ToolName,
      CalculatorTool,
      ['INVALID_ARGUMENTS', 'DIVIDE_BY_ZERO', 'NON_FINITE_RESULT', 'TOOL_EXCEPTION', 'TIMEOUT'],
    ],
    [DelayTool.ToolName, DelayTool, ['INVALID_ARGUMENTS', 'TIMEOUT', 'TOOL_EXCEPTION']],
    [
      FailureInjectionTool.ToolName,
      FailureInjectionTool,
      ['INVALID_ARGUMENTS', 'INTENTIONAL_FAILURE', 'TOOL_EXCEPTION', 'MALFORMED_RESULT', 'TIMEOUT'],
    ],
    [
      IssueRefundTool.ToolName,
      IssueRefundTool,
      ['INVALID_ARGUMENTS', 'APPROVAL_DENIED', 'APPROVAL_EXPIRED', 'TIMEOUT', 'TOOL_EXCEPTION'],
    ],
  ] as const)(
    'of %s documents every error code it can return, and the cancelled shape (AGN-005 §7.2.1)',
    (_name, tool, codes) => {
      const documented = [...tool.ToolUsageMetadata.matchAll(/^- ([A-Z_]+):/gm)].map((match) => match[1]);
      expect(documented.sort()).toEqual([...codes].sort());
      expect(tool.ToolUsageMetadata).toMatch(/^- A successful result with "wasCancelled": true: /m);
    },
  );

  it.each(tools.map((tool) => [tool.ToolName, tool] as const))(
    'of %s names every code the contract kit finds in its source',
    async (_name, tool) => {
      const report = await verifyToolContract(tool, { garbage: false, cancellation: false });
      expect(
        report.warnings.filter((finding) => finding.code === ContractCheckCode.USAGE_ERROR_CODE_UNDOCUMENTED),
      ).toEqual([]);
    },
  );
});

describe('schemas', () => {
  it('are stable: a change to any of them must be deliberate (update the snapshot)', () => {
    expect(Object.fromEntries(tools.map((tool) => [tool.ToolName, tool.getSchema()]))).toMatchSnapshot();
  });
});
