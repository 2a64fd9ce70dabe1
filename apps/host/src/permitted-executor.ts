import {
  InvokeResult,
  type AgentToolExecutionContext,
  type AgentToolExecutor,
  type ExecuteOptions,
  type RegisteredTool,
} from '@aptix/tool-contract';
import { turnPrincipal } from './audit/audited-calls.js';
import type { HostPermissions } from './host-permissions.js';

/**
 * The executor the agent loop runs its tools with, held to the permissions of the principal whose turn
 * it is (issue 32): a call that principal may not make (a tool, or a mode change into a mode) comes back
 * to the model as a FORBIDDEN failure naming the permission, and nothing runs, as on HTTP and MCP. A
 * turn without a principal (a host without keys) and a principal with every permission pass through.
 */
export function permittedExecutor(
  executor: AgentToolExecutor,
  permissions: HostPermissions,
  toolOf: (name: string) => RegisteredTool | undefined,
): AgentToolExecutor {
  const execute = (
    name: string,
    args: unknown,
    context: AgentToolExecutionContext,
    options?: ExecuteOptions,
  ): Promise<InvokeResult<string>> => {
    const principal = turnPrincipal(options?.logger);
    const entry = principal === undefined ? undefined : toolOf(name);
    const refused = entry === undefined ? undefined : permissions.refusal(principal!, entry, args);
    if (refused !== undefined) return Promise.resolve(InvokeResult.fromError(refused.message, refused.code));
    return executor.execute(name, args, context, options);
  };
  return new Proxy(executor, {
    get: (target, key) => {
      if (key === 'execute') return execute;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
