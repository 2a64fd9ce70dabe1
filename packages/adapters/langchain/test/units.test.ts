/**
 * Aptix prompts and resources in LangChain (issue 37): a prompt is a chat prompt template that a real
 * LangChain chain pipes into a model, and resources load as `Document`s. A failed render or read throws
 * an AptixUnitError with its code and a message naming what is wrong, as LangChain's own templates throw.
 */
import { openScratchSessions, RED_PIXEL_PNG, unitsPackage } from '@aptix/adapter-core/testing';
import * as modeCatalogPackage from '@aptix/tool-mode-catalog';
import * as modeChangePackage from '@aptix/tool-mode-change';
import * as samples from '@aptix/tool-samples';
import { Document } from '@langchain/core/documents';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { describe, expect, it } from 'vitest';
import { AptixPromptTemplate, AptixUnitError, createLangChainTools } from '../src/index.js';
import { say, scriptedModel } from './scripted-model.js';

describe('@aptix/langchain prompts and resources', () => {
  it('pipes an Aptix prompt into a model: the model reads the rendered messages', async () => {
    const aptix = await createLangChainTools({ tools: [unitsPackage] });
    const template = aptix.prompt('acme_greeting');
    expect(template).toBeInstanceOf(AptixPromptTemplate);
    expect(template.inputVariables).toEqual(['name']);
    let read: BaseMessage[] = [];
    const { model } = scriptedModel([
      (messages) => {
        read = messages;
        return say('Good day, Ada.');
      },
    ]);
    const answer = await template.pipe(model).invoke({ name: 'Ada', style: 'formal' });
    expect(answer.content).toBe('Good day, Ada.');
    expect(read.map((message) => [message.type, message.content])).toEqual([
      ['human', 'Greet Ada in a formal style.'],
      ['ai', 'Understood.'],
    ]);
    // A partial fills an argument in advance, as LangChain's own templates do.
    const formal = await template.partial({ style: 'formal' });
    const messages = await formal.formatMessages({ name: 'Alan' });
    expect(messages[0]).toBeInstanceOf(HumanMessage);
    expect(messages[1]).toBeInstanceOf(AIMessage);
    expect(messages[0]!.content).toBe('Greet Alan in a formal style.');
  });

  it('gives an image of a prompt as a standard image block', async () => {
    const aptix = await createLangChainTools({ tools: [unitsPackage] });
    const messages = await aptix.prompt('acme_picture').formatMessages({});
    expect(messages[0]!.content).toEqual([{ type: 'image', mimeType: 'image/png', data: RED_PIXEL_PNG }]);
    expect(messages[1]!.content).toBe('Document acme://docs/readme (text/markdown):\n# Readme');
  });

  it('throws an AptixUnitError naming the field, the prompt or the failure, with its code', async () => {
    const aptix = await createLangChainTools({ tools: [unitsPackage] });
    const missing = await aptix
      .prompt('acme_greeting')
      .invoke({ style: 'formal' })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(AptixUnitError);
    expect((missing as AptixUnitError).code).toBe('INVALID_ARGUMENTS');
    expect((missing as AptixUnitError).message).toMatch(/'name'/);
    const thrown = await aptix
      .prompt('acme_throws')
      .formatMessages({})
      .catch((error: unknown) => error);
    expect(thrown).toMatchObject({
      code: 'RENDER_FAILED',
      message: 'Prompt "acme_throws" failed: Error: the template store is down',
    });
    expect(() => aptix.prompt('acme_nope')).toThrow(/No prompt named "acme_nope".*acme_greeting/);
    await expect(aptix.resourceLoader(['acme://nothing']).load()).rejects.toMatchObject({
      code: 'RESOURCE_NOT_FOUND',
    });
  });

  it('loads resources as Documents that a chain puts before the model', async () => {
    const aptix = await createLangChainTools({ tools: [unitsPackage] });
    const all = await aptix.resourceLoader().load();
    expect(all.every((document) => document instanceof Document)).toBe(true);
    expect(all.map((document) => document.metadata)).toEqual([
      { source: 'acme://docs/readme', uri: 'acme://docs/readme', mimeType: 'text/markdown' },
      { source: 'acme://logo.png', uri: 'acme://logo.png', mimeType: 'image/png', blob: RED_PIXEL_PNG },
    ]);
    const [readme] = await aptix.resourceLoader(['acme://docs/readme', 'acme://users/ada']).load();
    let read: BaseMessage[] = [];
    const { model } = scriptedModel([
      (messages) => {
        read = messages;
        return say('It says hello.');
      },
    ]);
    const chain = ChatPromptTemplate.fromMessages([
      ['system', 'Answer from this document:\n{context}'],
      ['human', '{question}'],
    ]).pipe(model);
    await chain.invoke({ context: readme!.pageContent, question: 'What does it say?' });
    expect(read[0]!.content).toBe('Answer from this document:\n# Readme\n\nHello.');
  });

  it("renders only the session mode's prompts", async () => {
    const sessions = await openScratchSessions();
    try {
      const aptix = await createLangChainTools({
        tools: [samples, unitsPackage, modeCatalogPackage, modeChangePackage],
        session: await sessions.newSession('general'),
      });
      await expect(aptix.prompt('acme_diagnostics_only').formatMessages({})).rejects.toMatchObject({
        code: 'PROMPT_NOT_FOUND',
        message: expect.stringContaining('in mode "general"'),
      });
    } finally {
      await sessions.close();
    }
  });
});
