import type { AgentToolRegistry } from '@aptix/tool-contract';

/** What the Reasoner needs of a registry: `AgentToolRegistry` fits. */
export type ReasonerToolRegistry = Pick<AgentToolRegistry, 'get' | 'has' | 'names' | 'definitions'>;
