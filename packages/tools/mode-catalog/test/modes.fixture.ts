import {
  AgentToolRegistry,
  functionToolSchema,
  TypedAgentTool,
  type AnyAgentToolClass,
  type ToolDependencies,
} from '@aptix/tool-contract';
import { Type } from 'typebox';
import type { AgentModeSummary } from '../src/index.js';

/** Two valid modes; tests copy and break them. */
export function sampleModes(): AgentModeSummary[] {
  return [
    {
      id: '11111111111111111111111111111111',
      key: 'general',
      displayName: 'General',
      description: 'Everyday help.',
      systemPromptSummary: 'Be helpful.',
      isDefault: true,
      humanRoleHints: ['Any user'],
      exampleUtterances: ['Say hello to me.'],
      tools: ['agent_hello_world'],
    },
    {
      id: '22222222222222222222222222222222',
      key: 'ddr_authoring',
      displayName: 'DDR authoring',
      description: 'Writing design decision records.',
      systemPromptSummary: 'Be precise.',
      isDefault: false,
      humanRoleHints: ['Architect'],
      exampleUtterances: ['Help me write a DDR.', 'Review this record.'],
      tools: ['testing_calculator', 'agent_hello_world'],
    },
  ];
}

/** The first-party tool names of the Aptix repository (samples, mode catalog, mode change). */
export const FIRST_PARTY_TOOL_NAMES = [
  'agent_hello_world',
  'testing_ping_pong',
  'testing_calculator',
  'testing_delay',
  'testing_failure_injection',
  'testing_issue_refund',
  'agent_list_modes',
  'agent_change_mode',
] as const;

const NoArgs = Type.Object({}, { additionalProperties: false });

/** A minimal tool class with the given name, standing in for a tool of another package. */
export function standInTool(name: string): AnyAgentToolClass {
  return class StandIn extends TypedAgentTool<typeof NoArgs> {
    static readonly ToolName = name;
    static readonly ToolUsageMetadata = `${name} — a stand-in for tests.`;
    static getSchema() {
      return functionToolSchema(name, `Stands in for ${name}.`, NoArgs);
    }
    constructor({ logger }: ToolDependencies) {
      super(NoArgs, logger);
    }
    protected run() {
      return { name };
    }
  };
}

/** A registry holding stand-ins for the given tool names, in that order. */
export function registryWith(names: readonly string[]): AgentToolRegistry {
  const registry = new AgentToolRegistry();
  registry.registerTools(names.map(standInTool));
  return registry;
}
