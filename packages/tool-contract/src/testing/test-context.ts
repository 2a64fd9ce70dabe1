import type { AgentToolExecutionContext } from '../agent-tool.js';

/**
 * An execution context for tests, with fixed ids unless overridden.
 * @example await tool.execute('{"name":"Ada"}', testContext({ sessionId: 's-1' }));
 */
export function testContext(overrides: Partial<AgentToolExecutionContext> = {}): AgentToolExecutionContext {
  return {
    sessionId: 'test-session',
    conversationId: 'test-conversation',
    org: 'test-org',
    user: 'test-user',
    mode: 'general',
    ...overrides,
  };
}
