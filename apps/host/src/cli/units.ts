import type { Command } from 'commander';
import type { UnitOutcome } from '@aptix/tool-contract';
import { ScopeError, type AptixHost } from '../aptix-host.js';
import type { HostUnits, UnitScope } from '../units/host-units.js';
import { hostUnits, unitScope } from '../units/unit-scope.js';
import { promptListing, resourceListing, templateListing } from '../units/unit-listings.js';
import { table, type Output } from './output.js';

type WithHost = (work: (host: AptixHost, out: Output) => Promise<number | void>) => Promise<void>;
interface WhereOptions {
  mode?: string;
  session?: string;
}

/** Exit codes, as main.ts's ExitCode: 1 a failed request, 2 a usage error. */
const FAILED = 1;
const USAGE = 2;

/** The scope of the options, or the exit code after saying why there is none. */
async function scopeOf(host: AptixHost, options: WhereOptions, out: Output): Promise<UnitScope | number> {
  if (options.mode !== undefined && options.session !== undefined) {
    out.fail('BAD_REQUEST', 'Give either --mode or --session, not both.');
    return USAGE;
  }
  try {
    return await unitScope(
      host,
      {
        ...(options.mode === undefined ? {} : { mode: options.mode }),
        ...(options.session === undefined ? {} : { sessionId: options.session }),
      },
      undefined,
    );
  } catch (error) {
    if (!(error instanceof ScopeError)) throw error;
    out.fail(error.code, error.message);
    return error.code === 'UNKNOWN_MODE' ? USAGE : FAILED;
  }
}

/** Runs `work` in the options' scope on a host that has prompts and resources. */
function inScope(
  withHost: WithHost,
  options: WhereOptions,
  work: (units: HostUnits, scope: UnitScope, out: Output) => Promise<number>,
): Promise<void> {
  return withHost(async (host, out) => {
    const units = hostUnits(host)!;
    const scope = await scopeOf(host, options, out);
    return typeof scope === 'number' ? scope : work(units, scope, out);
  });
}

function printed<T>(outcome: UnitOutcome<T>, out: Output, human: (value: T) => string): number {
  if (!outcome.ok) {
    out.fail(outcome.code, outcome.message);
    return outcome.code === 'INVALID_ARGUMENTS' || outcome.code === 'INVALID_URI' ? USAGE : FAILED;
  }
  out.print(outcome.value, human as (document: never) => string);
  return 0;
}

const where = (command: Command) =>
  command
    .option('--mode <key>', "this mode's (default: the default mode)")
    .option('--session <id>', "the current mode's of this session");

/** A read's contents as `{ contents }`, the shape MCP and HTTP answer. */
function contentsOf<T>(outcome: UnitOutcome<T>): UnitOutcome<{ contents: T }> {
  return outcome.ok ? { ok: true, value: { contents: outcome.value } } : outcome;
}

/** `aptix prompts list|get` and `aptix resources list|read`: what MCP and HTTP serve, from the command line. */
export function registerUnitCommands(program: Command, withHost: WithHost): void {
  const prompts = program.command('prompts').description('list and render prompts');
  where(prompts.command('list').description("list a mode's prompts and their arguments")).action(
    (options: WhereOptions) =>
      inScope(withHost, options, async (units, scope, out) => {
        const listed = units.promptsIn(scope).map(promptListing);
        out.print({ mode: scope.mode, prompts: listed }, () =>
          table(
            listed.map((prompt) => [
              prompt.name,
              prompt.arguments.map((arg) => arg.name).join(', '),
              prompt.description,
            ]),
          ),
        );
        return 0;
      }),
  );
  where(
    prompts
      .command('get')
      .description('render a prompt and print { description, messages }')
      .argument('<name>', 'the prompt')
      .argument('[arguments-json]', 'its arguments, one JSON object of strings', '{}'),
  ).action((name: string, args: string, options: WhereOptions) =>
    inScope(withHost, options, async (units, scope, out) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(args);
      } catch (error) {
        out.fail(
          'INVALID_ARGUMENTS',
          `The arguments are not valid JSON (${(error as Error).message}). Fix: pass one JSON object of strings, e.g. '{"topic":"modes"}'.`,
        );
        return USAGE;
      }
      return printed(await units.render(name, parsed, scope), out, (value) =>
        value.messages
          .map(
            (message) =>
              `${message.role}: ${message.content.type === 'text' ? message.content.text : `[${message.content.type}]`}`,
          )
          .join('\n\n'),
      );
    }),
  );

  const resources = program.command('resources').description('list and read resources');
  where(resources.command('list').description("list a mode's resources and resource templates")).action(
    (options: WhereOptions) =>
      inScope(withHost, options, async (units, scope, out) => {
        const listed = units
          .resourcesIn(scope)
          .map(({ resource, uri, name, title }) => resourceListing(resource, uri, name, title));
        const templates = units.templatesIn(scope).map(templateListing);
        out.print({ mode: scope.mode, resources: listed, templates }, () =>
          table([
            ...listed.map((resource) => [resource.uri, resource.mimeType, resource.name]),
            ...templates.map((template) => [template.uriTemplate, template.mimeType, template.name]),
          ]),
        );
        return 0;
      }),
  );
  where(
    resources
      .command('read')
      .description('read a resource and print { contents }')
      .argument('<uri>', 'the URI to read'),
  ).action((uri: string, options: WhereOptions) =>
    inScope(withHost, options, async (units, scope, out) =>
      printed(contentsOf(await units.read(uri, scope)), out, ({ contents }) =>
        contents
          .map((entry) =>
            'text' in entry ? entry.text : `[${entry.mimeType ?? 'binary'}, base64: ${entry.blob.length} characters]`,
          )
          .join('\n'),
      ),
    ),
  );
}
