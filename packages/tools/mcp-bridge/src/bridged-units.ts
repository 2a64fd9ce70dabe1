import type { Client, Prompt, Resource, ResourceTemplateType as ResourceTemplate } from '@modelcontextprotocol/client';
import { Type, type TSchema } from 'typebox';
import {
  canonicalJson,
  inspectPrompt,
  inspectResource,
  type AdminLogger,
  type CompleteFunction,
  type DefinedPrompt,
  type DefinedResource,
  type PackageUnits,
  type PromptMessage,
  type ResourceContents,
} from '@aptix/tool-contract';
import { aptixNames, defaultPrefix } from './naming.js';
import type { McpBridgeOptions } from './options.js';
import type { ResourceWatches } from './resource-watches.js';

/** The most prompts, resources and templates one server brings, each; the rest are left out, with a warning. */
export const MAX_BRIDGED_UNITS = 500;
/** Completions a bridged prompt or template asks the server for wait this long at most. */
const REMOTE_TIMEOUT_MS = 30_000;

/** What each bridged unit was built from, as canonical JSON: listed again unchanged, a unit keeps its object (see live-units.ts). */
const sources = new WeakMap<object, string>();

/** What a bridged unit was built from (its remote definition, its name, and how it completes and subscribes). */
export function unitSource(unit: DefinedPrompt | DefinedResource): string | undefined {
  return sources.get(unit);
}

/**
 * A remote MCP server's prompts, resources and resource templates as Aptix units, under the bridge's
 * prefix and modes, each checked against the contract before it is offered (a unit that breaks it is
 * left out with a warning, never stopping the host): `prompts/get`, `resources/read` and
 * `completion/complete` go to the server. Resources keep the server's URIs; their names get the prefix.
 * A server that declares `resources.subscribe` on a 2025 revision has its resources offered with
 * `subscribe`: the server is subscribed while someone watches, and its updates are told on.
 */
export async function bridgedUnits(
  client: () => Client,
  options: McpBridgeOptions,
  logger: AdminLogger,
  watches?: ResourceWatches,
): Promise<PackageUnits> {
  const server = options.name;
  const prefix = options.prefix ?? defaultPrefix(server);
  const capabilities = client().getServerCapabilities() ?? {};
  const completes = capabilities.completions !== undefined;
  const warn = (what: string) =>
    logger.addCustomEvent('warn', '[McpBridge_UnitSkipped]', `MCP server "${server}": ${what}`, [['Server', server]]);
  const modes = options.modes === undefined ? {} : { modes: options.modes };
  // resources/subscribe is a 2025 method; on 2026-07-28 updates come through subscriptions/listen, not carried yet.
  const subscribable =
    watches !== undefined &&
    capabilities.resources?.subscribe === true &&
    client().getNegotiatedProtocolVersion()?.startsWith('2025') === true;
  const subscribe = subscribable
    ? { subscribe: (uri: string, changed: () => void) => watches.watch(uri, changed) }
    : {};

  const remotePrompts = capabilities.prompts === undefined ? [] : await listAll(client, 'prompts', warn);
  const remoteResources = capabilities.resources === undefined ? [] : await listAll(client, 'resources', warn);
  const remoteTemplates = capabilities.resources === undefined ? [] : await listAll(client, 'templates', warn);

  const promptNames = aptixNames(
    prefix,
    remotePrompts.map((prompt) => prompt.name),
  );
  const prompts: DefinedPrompt[] = [];
  for (const remote of remotePrompts) {
    const name = promptNames.get(remote.name)!;
    const args: Record<string, TSchema> = {};
    const complete: Record<string, CompleteFunction> = {};
    for (const argument of remote.arguments ?? []) {
      const text = Type.String({
        description: argument.description ?? `The ${argument.name} argument of ${server}'s prompt ${remote.name}.`,
      });
      args[argument.name] = argument.required === true ? text : Type.Optional(text);
      if (completes)
        complete[argument.name] = (value, context) =>
          remoteCompletion(client(), { type: 'ref/prompt', name: remote.name }, argument.name, value, context);
    }
    const candidate: DefinedPrompt = {
      kind: 'prompt',
      name,
      ...(remote.title === undefined ? {} : { title: remote.title }),
      description: remote.description || `The prompt ${remote.name} of MCP server ${server}.`,
      args: Type.Object(args),
      ...modes,
      ...(completes ? { complete } : {}),
      render: async (given, context) =>
        (
          await client().getPrompt(
            { name: remote.name, arguments: given as Record<string, string> },
            { signal: context.signal, timeout: REMOTE_TIMEOUT_MS },
          )
        ).messages as unknown as PromptMessage[],
    };
    const { violations } = inspectPrompt(candidate);
    if (violations.length > 0) warn(`its prompt "${remote.name}" is not offered: ${violations[0]!.message}`);
    else {
      sources.set(candidate, canonicalJson({ remote, name, completes, modes: options.modes ?? null }));
      prompts.push(candidate);
    }
  }

  const resourceNames = aptixNames(prefix, [
    ...remoteResources.map((resource) => resource.name),
    ...remoteTemplates.map((template) => template.name),
  ]);
  const read = async (uri: string, signal: AbortSignal) =>
    (await client().readResource({ uri }, { signal, timeout: REMOTE_TIMEOUT_MS })).contents as ResourceContents[];
  const resources: DefinedResource[] = [];
  const offer = (candidate: DefinedResource, remote: Resource | ResourceTemplate) => {
    const { violations } = inspectResource(candidate);
    if (violations.length > 0) warn(`its resource "${remote.name}" is not offered: ${violations[0]!.message}`);
    else {
      const built = { remote, name: candidate.name, completes, subscribable, modes: options.modes ?? null };
      sources.set(candidate, canonicalJson(built));
      resources.push(candidate);
    }
  };
  const fields = (remote: Resource | ResourceTemplate) => ({
    kind: 'resource' as const,
    name: resourceNames.get(remote.name)!,
    ...(remote.title === undefined ? {} : { title: remote.title }),
    ...(remote.description === undefined ? {} : { description: remote.description }),
    mimeType: remote.mimeType ?? 'application/octet-stream',
    ...modes,
    ...subscribe,
  });
  for (const remote of remoteResources) {
    offer(
      {
        ...fields(remote),
        uri: remote.uri,
        read: (_request, context) => read(remote.uri, context.signal),
      },
      remote,
    );
  }
  for (const remote of remoteTemplates) {
    const variables = [...remote.uriTemplate.matchAll(/\{([^}]*)\}/g)].map((match) => match[1]!);
    offer(
      {
        ...fields(remote),
        uriTemplate: remote.uriTemplate,
        read: (request, context) => read(request.uri, context.signal),
        ...(completes
          ? {
              complete: Object.fromEntries(
                variables.map((variable) => [
                  variable,
                  (value: string, context: Parameters<CompleteFunction>[1]) =>
                    remoteCompletion(
                      client(),
                      { type: 'ref/resource', uri: remote.uriTemplate },
                      variable,
                      value,
                      context,
                    ),
                ]),
              ),
            }
          : {}),
      },
      remote,
    );
  }
  return { prompts, resources };
}

type Listed = { prompts: Prompt; resources: Resource; templates: ResourceTemplate };

/** Every page of a list, up to {@link MAX_BRIDGED_UNITS}. */
async function listAll<K extends keyof Listed>(
  client: () => Client,
  kind: K,
  warn: (what: string) => void,
): Promise<Listed[K][]> {
  const found: Listed[K][] = [];
  let cursor: string | undefined;
  do {
    const params = cursor === undefined ? {} : { cursor };
    const options = { timeout: REMOTE_TIMEOUT_MS };
    const page =
      kind === 'prompts'
        ? await client().listPrompts(params, options)
        : kind === 'resources'
          ? await client().listResources(params, options)
          : await client().listResourceTemplates(params, options);
    const items = (
      'prompts' in page ? page.prompts : 'resources' in page ? page.resources : page.resourceTemplates
    ) as Listed[K][];
    found.push(...items);
    cursor = page.nextCursor;
  } while (cursor !== undefined && found.length < MAX_BRIDGED_UNITS);
  if (found.length > MAX_BRIDGED_UNITS) {
    warn(`it lists more than ${MAX_BRIDGED_UNITS} ${kind}; only the first ${MAX_BRIDGED_UNITS} are offered.`);
    found.length = MAX_BRIDGED_UNITS;
  }
  return found;
}

async function remoteCompletion(
  client: Client,
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
  argument: string,
  value: string,
  context: Parameters<CompleteFunction>[1],
): Promise<string[]> {
  const answer = await client.complete(
    { ref, argument: { name: argument, value }, context: { arguments: { ...context.arguments } } },
    { signal: context.signal, timeout: REMOTE_TIMEOUT_MS },
  );
  return answer.completion.values;
}
