import { InvokeResult } from '@aptix/tool-contract';
import { describe, expect, it } from 'vitest';
import {
  functionCallsOf,
  inspectConversation,
  PENDING_CALL_ITEM,
  textOf,
  toModelInput,
  toolOutputText,
  userMessageItem,
} from './conversation.js';

const functionCall = (callId: string, name = 'testing_calculator') => ({
  id: `fc_${callId}`,
  type: 'function_call',
  call_id: callId,
  name,
  arguments: '{}',
  status: 'completed',
});

describe('toModelInput', () => {
  it('sends output items back without their ids, and assistant text as a plain message', () => {
    const input = toModelInput([
      userMessageItem('Hi'),
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        phase: 'commentary',
        content: [
          { type: 'output_text', text: 'Let me ', annotations: [] },
          { type: 'output_text', text: 'check.', annotations: [] },
        ],
      },
      functionCall('c1'),
      { type: 'function_call_output', call_id: 'c1', output: '{"value":1}' },
      { type: PENDING_CALL_ITEM, call_id: 'c1', name: 'x', server_result: '{}' },
      {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'refusal', refusal: 'I cannot.' }],
      },
    ]);
    expect(input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] },
      { type: 'message', role: 'assistant', content: 'Let me check.', phase: 'commentary' },
      { type: 'function_call', call_id: 'c1', name: 'testing_calculator', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '{"value":1}' },
      { type: 'message', role: 'assistant', content: 'I cannot.' },
    ]);
  });

  it('replays reasoning only when it carries encrypted content', () => {
    const kept = {
      id: 'rs_2',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'thinking' }],
      encrypted_content: 'gAAA…',
    };
    expect(toModelInput([{ id: 'rs_1', type: 'reasoning', summary: [] }, kept])).toEqual([kept]);
  });
});

describe('inspectConversation', () => {
  it('tells calls waiting for the client from calls the host never finished', () => {
    const state = inspectConversation([
      functionCall('answered'),
      { type: 'function_call_output', call_id: 'answered', output: '{}' },
      functionCall('waiting', 'workspace_apply_edit'),
      { type: PENDING_CALL_ITEM, call_id: 'waiting', name: 'workspace_apply_edit', server_result: '{"ok":true}' },
      functionCall('lost'),
    ]);
    expect(state.pending).toEqual([
      { callId: 'waiting', name: 'workspace_apply_edit', arguments: '{}', serverResult: '{"ok":true}' },
    ]);
    expect(state.interrupted).toEqual([{ callId: 'lost', name: 'testing_calculator', arguments: '{}' }]);
  });
});

describe('tool outputs', () => {
  it('passes a result\'s JSON through and turns a failure into {"error":{"message","code"}}', () => {
    expect(toolOutputText(InvokeResult.create('{"value":5}'))).toBe('{"value":5}');
    expect(JSON.parse(toolOutputText(InvokeResult.fromError('b must not be 0.', 'DIVIDE_BY_ZERO')))).toEqual({
      error: { message: 'b must not be 0.', code: 'DIVIDE_BY_ZERO' },
    });
    expect(JSON.parse(toolOutputText(InvokeResult.fromError('No code.')))).toEqual({
      error: { message: 'No code.', code: 'TOOL_FAILED' },
    });
  });

  it("reads calls and text from a response's output", () => {
    const output = [
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'One.' }] },
      functionCall('c1'),
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Two.' }] },
    ];
    expect(functionCallsOf(output)).toEqual([{ callId: 'c1', name: 'testing_calculator', arguments: '{}' }]);
    expect(textOf(output)).toBe('One.\n\nTwo.');
  });
});
