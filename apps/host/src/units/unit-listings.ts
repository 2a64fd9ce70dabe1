import type { RegisteredPrompt, RegisteredResource } from '@aptix/tool-contract';

/** How MCP and HTTP list prompts and resources: MCP's `Prompt`, `Resource` and `ResourceTemplate` shapes. */

export function promptListing(prompt: RegisteredPrompt) {
  return {
    name: prompt.name,
    ...(prompt.title === undefined ? {} : { title: prompt.title }),
    description: prompt.description,
    arguments: prompt.arguments.map(({ name, description, required }) => ({ name, description, required })),
  };
}

function described(resource: RegisteredResource, title: string | undefined) {
  return {
    ...((title ?? resource.title) === undefined ? {} : { title: (title ?? resource.title)! }),
    ...(resource.description === undefined ? {} : { description: resource.description }),
    mimeType: resource.mimeType,
    ...(resource.annotations === undefined
      ? {}
      : { annotations: resource.annotations as { audience?: Array<'user' | 'assistant'>; priority?: number } }),
  };
}

export function resourceListing(resource: RegisteredResource, uri: string, name: string, title?: string) {
  return { uri, name, ...described(resource, title) };
}

export function templateListing(resource: RegisteredResource) {
  return { uriTemplate: resource.template!.template, name: resource.name, ...described(resource, undefined) };
}
