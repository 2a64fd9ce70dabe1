import {
  Content,
  definePrompt,
  defineResource,
  type PromptList,
  type ResourceList,
  type ToolPackage,
} from '@aptix/tool-contract';
import type { TObject } from 'typebox';
import { RED_PIXEL_PNG } from './content-tool.js';

/** The greeting's arguments, as the plain JSON Schema `Type.Object` would make. */
const GreetingArgs = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Who to greet.' },
    style: { anyOf: [{ const: 'formal' }, { const: 'casual' }], description: 'The style.' },
  },
  required: ['name'],
} as unknown as TObject;

/** Prompts for adapter tests: two messages, an image and a document, one mode's only, one that throws. */
export const unitPrompts = [
  definePrompt({
    name: 'acme_greeting',
    title: 'Greeting',
    description: 'Asks for a greeting of someone, in a style.',
    args: GreetingArgs,
    render: (args) => {
      const { name, style } = args as { name: string; style?: string };
      return [
        { role: 'user', content: Content.text(`Greet ${name} in a ${style ?? 'casual'} style.`) },
        { role: 'assistant', content: Content.text('Understood.') },
      ];
    },
  }),
  definePrompt({
    name: 'acme_picture',
    description: 'A message with an image and one with an embedded document.',
    render: () => [
      { role: 'user', content: Content.image(RED_PIXEL_PNG, 'image/png') },
      { role: 'user', content: Content.resource('acme://docs/readme', { text: '# Readme' }, 'text/markdown') },
    ],
  }),
  definePrompt({
    name: 'acme_diagnostics_only',
    description: 'Offered only in the tool_diagnostics mode.',
    modes: ['tool_diagnostics'],
    render: () => 'Diagnose the tools.',
  }),
  definePrompt({
    name: 'acme_throws',
    description: 'A render that throws.',
    render: () => {
      throw new Error('the template store is down');
    },
  }),
] as const satisfies PromptList;

/** Resources for adapter tests: a text document, an image, and a template with completions. */
export const unitResources = [
  defineResource({
    name: 'acme_readme',
    uri: 'acme://docs/readme',
    mimeType: 'text/markdown',
    description: 'The readme.',
    read: () => '# Readme\n\nHello.',
  }),
  defineResource({
    name: 'acme_logo',
    uri: 'acme://logo.png',
    mimeType: 'image/png',
    read: () => Buffer.from(RED_PIXEL_PNG, 'base64'),
  }),
  defineResource({
    name: 'acme_user',
    uriTemplate: 'acme://users/{id}',
    mimeType: 'application/json',
    read: ({ variables }) => JSON.stringify({ id: variables.id }),
    complete: { id: (typed) => ['ada', 'alan', 'grace'].filter((id) => id.startsWith(typed)) },
  }),
] as const satisfies ResourceList;

/**
 * A tool package with no tools and the prompts and resources above, for tests of what an adapter makes
 * of prompts and resources: `createAptixTools({ tools: [unitsPackage] })`.
 */
export const unitsPackage: ToolPackage = { tools: [], prompts: unitPrompts, resources: unitResources };
