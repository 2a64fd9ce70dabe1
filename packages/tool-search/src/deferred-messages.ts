import { CALL_TOOL, FIND_TOOLS } from './meta-tools.js';

/**
 * What a deferred mode says to the model, the same from every surface that defers (the Reasoner, the
 * framework adapters): the instructions that stand in for the tools' guides, and the refusals.
 */

/** The section of a deferred mode's instructions that stands in for its tools' guides. */
export function findingToolsSection(total: number): string {
  return [
    '# Finding tools',
    `This mode offers ${total} tools that are not listed to you. Find the ones a task needs with ${FIND_TOOLS} (describe the task in a few words; ` +
      `it answers each tool's parameters and usage guide), then run one with ${CALL_TOOL} {"name": "<tool>", "arguments": {…}}, following its guide.`,
  ].join('\n');
}

/**
 * The refusal of a tool the session's deferred mode does not offer. It cannot list a thousand tools, so
 * it says what this model can do: search the mode, or change to a mode that offers the tool (`offeredIn`).
 */
export function deferredToolNotInModeMessage(
  tool: string,
  mode: string,
  sessionId: string,
  offeredIn: readonly string[],
): string {
  const search = `Find this mode's tools with ${FIND_TOOLS}.`;
  if (offeredIn.length === 0) return `There is no tool "${tool}" in any mode; nothing was run. ${search}`;
  return (
    `Tool "${tool}" is not offered in mode "${mode}" (session ${sessionId}); it was not run. ${search} ` +
    `"${tool}" is offered in mode ${offeredIn.map((key) => `"${key}"`).join(', ')}: switch with agent_change_mode once the user agrees, then call it again.`
  );
}

/** The refusal of a meta tool in a mode whose tools are listed in full (the session moved to it since the model was asked). */
export function metaToolNotOfferedMessage(tool: string, mode: string, offered: readonly string[]): string {
  return `${tool} is not offered in mode "${mode}": this mode's tools are listed to you directly (${offered.join(', ')}). Call them by name.`;
}

/** The refusal of a meta-tool call that names another session than the conversation's. */
export function sessionMismatchMessage(tool: string, given: string, sessionId: string): string {
  return `${tool} was not run: it names session "${given}", but this conversation works in session ${sessionId}. Leave sessionId out: calls run in the conversation's session.`;
}
