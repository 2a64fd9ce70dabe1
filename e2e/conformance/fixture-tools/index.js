// Test-only: the fixture tools the MCP conformance suite calls by name (its README lists them).
// Plain JavaScript so the suite's host needs no build step for them. Never part of a default host.
import { Type } from 'typebox';
import { functionToolSchema, InvokeResult, TypedAgentTool, usage } from '@aptix/tool-contract';

const NoArgs = Type.Object({}, { additionalProperties: false });

/** A fixture tool class: no arguments, `run` decides the answer. */
function fixture(name, description, run) {
  const Tool = class extends TypedAgentTool {
    static ToolName = name;
    static ToolUsageMetadata = usage`
      ${name} — Usage Guide

      Primary purpose:
      - ${description}

      Rules:
      - Only the MCP conformance suite calls it; it takes no arguments.
      - Call it once per check.

      Arguments:
      - none.

      Error codes:
      - INVALID_ARGUMENTS: an argument was given.

      Good usage:
      - {} → the fixture's answer

      Bad usage:
      - { "x": 1 }: it takes no arguments.
    `;
    static getSchema() {
      return functionToolSchema(name, description, NoArgs);
    }
    constructor({ logger }) {
      super(NoArgs, logger);
    }
    run(_args, context, signal) {
      return run(context, signal);
    }
  };
  return Tool;
}

export const tools = [
  fixture('test_simple_text', 'Answers with a fixed text, for the conformance suite.', () => 'This is a simple text response for testing.'),
  fixture('test_error_handling', 'Always fails, for the conformance suite.', () => InvokeResult.fromError('This tool intentionally returns an error for testing', 'FIXTURE_ERROR')),
  fixture('test_tool_with_progress', 'Reports progress 0, 50 and 100 of 100, for the conformance suite.', async (context) => {
    for (const progress of [0, 50, 100]) {
      context.reportProgress?.({ progress, total: 100, message: `step ${progress / 50 + 1} of 3` });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return 'Progress reported: 0, 50 and 100 of 100.';
  }),
  fixture('test_tool_with_logging', 'Sends three log entries to the caller while it runs, for the conformance suite.', async (context) => {
    for (const message of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
      context.log?.('info', message);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return 'Logged three entries.';
  }),
];
