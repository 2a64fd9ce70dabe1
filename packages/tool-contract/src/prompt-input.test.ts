import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { acceptedAnswer, type ToolInputChannel } from './input-required.js';
import { InvokeResult } from './invoke-result.js';
import { definePrompt } from './prompt.js';
import { samplingRequest, sampledText } from './sampling-and-roots.js';
import { renderPrompt, UnitErrorCode } from './unit-calls.js';
import { PromptRegistry } from './unit-registry.js';

const question = {
  method: 'elicitation/create' as const,
  params: {
    message: 'Which project?',
    requestedSchema: { type: 'object' as const, properties: { project: { type: 'string' } } },
  },
};

/** Asks the user which project, and the client's model for a title, before it renders; `asked` is what it asks. */
let asked: unknown = {
  inputRequests: { project: question, title: samplingRequest('A title?', { maxTokens: 10 }) },
  state: { step: 1 },
};
const Review = new PromptRegistry().register(
  definePrompt({
    name: 'acme_review',
    description: 'Asks for a review of a project, asking which one first.',
    args: Type.Object({ depth: Type.String({ description: 'How deep.' }) }),
    render: ({ depth }, context) => {
      const project = acceptedAnswer(context.input, 'project')?.project;
      const title = sampledText(context.input, 'title');
      if (typeof project === 'string' && title !== undefined)
        return `Review ${project} (${title}) at ${depth} depth; state ${JSON.stringify(context.input?.state)}.`;
      return InvokeResult.inputRequired(asked as never);
    },
  }),
);

const channel = (input: Partial<ToolInputChannel>): ToolInputChannel => ({
  canAsk: true,
  canSample: true,
  canListRoots: true,
  responses: {},
  ...input,
});

describe('a prompt that asks the client before it renders (InvokeResult.inputRequired in render)', () => {
  it('passes its requests on to a caller that can answer all, then renders with the answers and its state', async () => {
    const first = await renderPrompt(Review, { depth: 'full' }, { input: channel({}) });
    expect(first).toMatchObject({ ok: false, code: UnitErrorCode.INPUT_REQUIRED, inputRequired: asked });
    const second = await renderPrompt(
      Review,
      { depth: 'full' },
      {
        input: channel({
          responses: {
            project: { action: 'accept', content: { project: 'aptix' } },
            title: { role: 'assistant', content: { type: 'text', text: 'Hosting' } },
          },
          state: { step: 1 },
        }),
      },
    );
    expect(second.ok && second.value.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Review aptix (Hosting) at full depth; state {"step":1}.' } },
    ]);
  });

  it('a caller that cannot answer gets the code of the first thing it lacks, and no requests', async () => {
    for (const [input, code] of [
      [undefined, UnitErrorCode.INPUT_REQUIRED],
      [channel({ canAsk: false }), UnitErrorCode.INPUT_REQUIRED],
      [channel({ canSample: false }), UnitErrorCode.SAMPLING_UNAVAILABLE],
    ] as const) {
      const outcome = await renderPrompt(Review, { depth: 'x' }, input === undefined ? {} : { input });
      expect(outcome).toMatchObject({ ok: false, code });
      expect(outcome).not.toHaveProperty('inputRequired');
      expect(!outcome.ok && outcome.message).toContain('Prompt "acme_review" needs');
    }
  });

  it('malformed requests, or a failed result without requests, are a malformed render', async () => {
    for (const [value, expected] of [
      [{ inputRequests: {} }, '1 to 8 questions'],
      [{ inputRequests: { q: { method: 'tools/call' } } }, 'must be "elicitation/create"'],
      [{ inputRequests: { q: question }, state: 'x'.repeat(9000) }, 'over the limit'],
    ] as const) {
      asked = value;
      const outcome = await renderPrompt(Review, { depth: 'x' }, { input: channel({}) });
      expect(outcome).toMatchObject({ ok: false, code: UnitErrorCode.MALFORMED_RESULT });
      expect(!outcome.ok && outcome.message).toContain(expected);
    }
    const failing = new PromptRegistry().register(
      definePrompt({ name: 'acme_fails', description: 'Fails.', render: () => InvokeResult.fromError('no') as never }),
    );
    expect(await renderPrompt(failing, {}, { input: channel({}) })).toMatchObject({
      ok: false,
      code: UnitErrorCode.MALFORMED_RESULT,
      message: 'Prompt "acme_fails" rendered a failed result, not messages.',
    });
  });
});
