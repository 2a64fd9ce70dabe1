// Test-only: the prompts and resources the MCP conformance suite asks for by name (its README lists
// them), written as any package writes them (definePrompt, defineResource). Never part of a default host.
import { Type } from 'typebox';
import { acceptedAnswer, Content, definePrompt, defineResource, InvokeResult } from '@aptix/tool-contract';

/** A 1×1 red PNG. */
const RED_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** Words arg1 completes from (the completion scenario asks for values that start with what was typed). */
const WORDS = ['paris', 'park', 'party', 'test', 'testing', 'tested'];

export const tools = [];

export const prompts = [
  definePrompt({
    name: 'test_simple_prompt',
    description: 'A prompt without arguments, for the conformance suite.',
    render: () => 'This is a simple prompt for testing.',
  }),
  definePrompt({
    name: 'test_prompt_with_arguments',
    description: 'A prompt that puts its two arguments in its text, for the conformance suite.',
    args: Type.Object({
      arg1: Type.String({ description: 'The first value.' }),
      arg2: Type.String({ description: 'The second value.' }),
    }),
    complete: { arg1: (typed) => WORDS.filter((word) => word.startsWith(typed.toLowerCase())) },
    render: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
  }),
  definePrompt({
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a text document at the given URI, for the conformance suite.',
    args: Type.Object({ resourceUri: Type.String({ description: 'The URI the embedded document carries.' }) }),
    render: ({ resourceUri }) => [
      {
        role: 'user',
        content: Content.resource(resourceUri, { text: 'Embedded resource content for testing.' }, 'text/plain'),
      },
      { role: 'user', content: Content.text('Please process the embedded resource above.') },
    ],
  }),
  definePrompt({
    name: 'test_prompt_with_image',
    description: 'A prompt with an image, a 1x1 red PNG, for the conformance suite.',
    render: () => [
      { role: 'user', content: Content.image(RED_PIXEL_PNG, 'image/png') },
      { role: 'user', content: Content.text('Please analyze the image above.') },
    ],
  }),
  definePrompt({
    name: 'test_input_required_result_prompt',
    description: 'A prompt that asks the user for its context before it renders, for the conformance suite.',
    render: (_args, context) => {
      const answer = acceptedAnswer(context.input, 'user_context')?.context;
      if (typeof answer === 'string') return `Use this context: ${answer}`;
      return InvokeResult.inputRequired({
        inputRequests: {
          user_context: {
            method: 'elicitation/create',
            params: {
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            },
          },
        },
      });
    },
  }),
];

/** The subscribers of test://watched-resource, told when it changes. */
const watchers = new Set();

export const resources = [
  defineResource({
    name: 'static_text',
    uri: 'test://static-text',
    description: 'A fixed text document, for the conformance suite.',
    mimeType: 'text/plain',
    read: () => 'This is the content of the static text resource.',
  }),
  defineResource({
    name: 'static_binary',
    uri: 'test://static-binary',
    description: 'A fixed binary document (a 1x1 red PNG), for the conformance suite.',
    mimeType: 'image/png',
    read: () => Buffer.from(RED_PIXEL_PNG, 'base64'),
  }),
  defineResource({
    name: 'template_data',
    uriTemplate: 'test://template/{id}/data',
    description: 'A JSON document per id, for the conformance suite.',
    mimeType: 'application/json',
    complete: { id: (typed) => ['123', '456', '789'].filter((id) => id.startsWith(typed)) },
    read: ({ variables }) =>
      JSON.stringify({ id: variables.id, templateTest: true, data: `Data for ID: ${variables.id}` }),
  }),
  defineResource({
    name: 'watched_resource',
    uri: 'test://watched-resource',
    description: 'A document clients may subscribe to, for the conformance suite.',
    mimeType: 'text/plain',
    read: () => 'This resource can be watched for changes.',
    subscribe(_uri, changed) {
      watchers.add(changed);
      return () => watchers.delete(changed);
    },
  }),
];
