// Type tests, run by `typecheck`: a class missing a static member of the contract must not compile.
import { Type } from 'typebox';
import { AgentToolRegistry, functionToolSchema, type AgentTool, type ToolList } from './index.js';

const Args = Type.Object({ a: Type.String({ description: 'a' }) });

class Complete implements AgentTool {
  static readonly ToolName = 'complete';
  static readonly ToolUsageMetadata = 'usage';
  static getSchema() {
    return functionToolSchema('complete', 'x', Args);
  }
  readonly name = 'complete';
  readonly isToolFullyExecutedOnServer = true;
  constructor(_deps: { logger: unknown }) {}
  async execute() {
    return { successful: true as const, result: '{}', errors: [] };
  }
}

class NoToolName {
  static readonly ToolUsageMetadata = 'usage';
  static getSchema() {
    return functionToolSchema('x', 'x', Args);
  }
  readonly name = 'x';
  readonly isToolFullyExecutedOnServer = true;
  async execute() {
    return { successful: true as const, result: '{}', errors: [] };
  }
}

class NoUsage {
  static readonly ToolName = 'x';
  static getSchema() {
    return functionToolSchema('x', 'x', Args);
  }
  readonly name = 'x';
  readonly isToolFullyExecutedOnServer = true;
  async execute() {
    return { successful: true as const, result: '{}', errors: [] };
  }
}

class NoSchema {
  static readonly ToolName = 'x';
  static readonly ToolUsageMetadata = 'usage';
  readonly name = 'x';
  readonly isToolFullyExecutedOnServer = true;
  async execute() {
    return { successful: true as const, result: '{}', errors: [] };
  }
}

class NoExecute {
  static readonly ToolName = 'x';
  static readonly ToolUsageMetadata = 'usage';
  static getSchema() {
    return functionToolSchema('x', 'x', Args);
  }
}

class BadSchema {
  static readonly ToolName = 'x';
  static readonly ToolUsageMetadata = 'usage';
  static getSchema() {
    return { type: 'function', name: 'x' };
  }
  readonly name = 'x';
  readonly isToolFullyExecutedOnServer = true;
  async execute() {
    return { successful: true as const, result: '{}', errors: [] };
  }
}

const registry = new AgentToolRegistry();
registry.registerTool(Complete);
export const ok = [Complete] as const satisfies ToolList;

// @ts-expect-error ToolName is missing
registry.registerTool(NoToolName);
// @ts-expect-error ToolUsageMetadata is missing
registry.registerTool(NoUsage);
// @ts-expect-error getSchema is missing
registry.registerTool(NoSchema);
// @ts-expect-error instances cannot execute
registry.registerTool(NoExecute);
// @ts-expect-error getSchema does not return a function-tool schema
registry.registerTool(BadSchema);
// @ts-expect-error a tool list holds only complete tool classes
export const bad = [Complete, NoToolName] as const satisfies ToolList;
