import { describe, expect, it } from 'vitest';
import * as entry from './index.js';

describe('the package entry', () => {
  it('exports exactly its public API: a change here is a change for every user', () => {
    expect(Object.keys(entry).sort()).toEqual([
      'APPROVAL_ID_KEY',
      'DEFAULT_BOOT_PROMPT',
      'DEFAULT_MAX_STEPS',
      'DEFAULT_OPENAI_BASE_URL',
      'MODE_CHANGE_TOOL',
      'PENDING_CALL_ITEM',
      'Reasoner',
      'ReasonerError',
      'ReasonerErrorCode',
      'TOOL_GUIDANCE_TAG',
      'ToolOutputCode',
      'approvalIdOf',
      'buildModePrompts',
      'createOpenAIClient',
      'createReasoner',
      'resolveModelConnection',
      'toMessageResponse',
      'toModelInput',
      'toServerSentEvent',
    ]);
  });

  it('keeps every tool output code equal to its name', () => {
    for (const [name, code] of Object.entries(entry.ToolOutputCode)) expect(code).toBe(name);
  });

  it('formats an event as one server-sent event: its type, then its JSON on one data line', () => {
    const frame = entry.toServerSentEvent({ type: 'text_delta', sessionId: 's1', delta: 'line one\nline two' });
    expect(frame).toBe(
      'event: text_delta\ndata: {"type":"text_delta","sessionId":"s1","delta":"line one\\nline two"}\n\n',
    );
  });
});
