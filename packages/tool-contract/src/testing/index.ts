/**
 * @aptix/tool-contract/testing: helpers for testing tools. Everything exported here is public API.
 */
import type { AgentToolExecutionContext } from '../agent-tool.js';

export { CapturingAdminLogger, type CapturedLogEntry } from '../admin-logger.js';

/**
 * An execution context for tests, with fixed ids unless overridden.
 * @example await tool.execute('{"name":"Ada"}', testContext({ sessionId: 's-1' }));
 */
export function testContext(overrides: Partial<AgentToolExecutionContext> = {}): AgentToolExecutionContext {
  return { sessionId: 'test-session', conversationId: 'test-conversation', org: 'test-org', user: 'test-user', mode: 'general', ...overrides };
}
