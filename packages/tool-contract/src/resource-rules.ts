import { isMediaType } from './content.js';
import { describeThrown } from './describe-thrown.js';
import { ContractErrorCode, type ContractViolation } from './errors.js';
import type { CompleteFunction } from './prompt.js';
import type { DefinedResource, ResourceAnnotations } from './resource.js';
import { canonicalJson, toPlainJson } from './schema.js';
import { checkComplete, checkModes, checkName, checkText, field, violations } from './unit-checks.js';
import { parseUriTemplate, uriProblem, type UriTemplate } from './uri-template.js';

/** What the registry keeps of a resource that passed every rule. */
export interface InspectedResource {
  readonly kind: 'resource';
  readonly name: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly mimeType: string;
  /** A fixed URI, or undefined for a template. */
  readonly uri: string | undefined;
  /** The parsed template, or undefined for a fixed URI. */
  readonly template: UriTemplate | undefined;
  readonly modes: readonly string[] | undefined;
  readonly annotations: ResourceAnnotations | undefined;
  readonly subscribable: boolean;
  readonly complete: Readonly<Record<string, CompleteFunction>>;
  readonly canonicalSchema: string;
  readonly resource: DefinedResource;
}

/** MCP's resource annotations, and nothing else: a listing with anything more would fail the client's check. */
function validAnnotations(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const { audience, priority, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    (audience === undefined ||
      (Array.isArray(audience) && audience.every((role) => role === 'user' || role === 'assistant'))) &&
    (priority === undefined || (typeof priority === 'number' && priority >= 0 && priority <= 1))
  );
}

/**
 * Checks a resource against the contract at run time: the name rule, exactly one of an absolute `uri`
 * (no `.`/`..` segments) and a level-1 `uriTemplate`, a media type, a read function, an optional
 * subscribe function, completions of the template's variables only.
 */
export function inspectResource(candidate: unknown): { resource?: InspectedResource; violations: ContractViolation[] } {
  const { found, fail, name } = violations('Resource', candidate);
  if (candidate === null || typeof candidate !== 'object' || typeof field(candidate, 'read') !== 'function') {
    fail(
      ContractErrorCode.NOT_A_RESOURCE,
      `it is ${describeThrown(candidate).slice(0, 80)}, not a resource with a read function`,
      'list what defineResource({ name, uri, mimeType, read }) returns in `resources`',
    );
    return { violations: found };
  }
  checkName(name ?? field(candidate, 'name'), fail, 'defineResource');
  const title = checkText(field(candidate, 'title'), 'title', false, fail);
  const description = checkText(field(candidate, 'description'), 'description', false, fail);
  const modes = checkModes(field(candidate, 'modes'), fail);
  const mimeType = field(candidate, 'mimeType');
  if (!isMediaType(mimeType))
    fail(
      ContractErrorCode.RESOURCE_MIME_TYPE_INVALID,
      `its mimeType ${describeThrown(mimeType).slice(0, 80)} is not a media type`,
      "declare what read returns, e.g. mimeType: 'text/markdown'",
    );
  const uri = field(candidate, 'uri');
  const uriTemplate = field(candidate, 'uriTemplate');
  let template: UriTemplate | undefined;
  if ((uri === undefined) === (uriTemplate === undefined)) {
    fail(
      ContractErrorCode.RESOURCE_URI_INVALID,
      uri === undefined ? 'it has neither uri nor uriTemplate' : 'it has both uri and uriTemplate',
      "give exactly one: uri: 'acme://docs/readme' for one document, or uriTemplate: 'acme://users/{id}' for many",
    );
  } else if (uri !== undefined) {
    const problem = uriProblem(uri);
    if (problem !== undefined)
      fail(
        ContractErrorCode.RESOURCE_URI_INVALID,
        `its uri ${describeThrown(uri).slice(0, 120)} is refused: ${problem}`,
        "use an absolute URI like 'acme://docs/readme'",
      );
  } else {
    const parsed = typeof uriTemplate === 'string' ? parseUriTemplate(uriTemplate) : 'it is not a string';
    if (typeof parsed === 'string')
      fail(
        ContractErrorCode.RESOURCE_URI_INVALID,
        `its uriTemplate ${describeThrown(uriTemplate).slice(0, 120)} is refused: ${parsed}`,
        "use an RFC 6570 level-1 template like 'acme://users/{id}'",
      );
    else template = parsed;
  }
  const subscribe = field(candidate, 'subscribe');
  if (subscribe !== undefined && typeof subscribe !== 'function')
    fail(
      ContractErrorCode.UNIT_FUNCTION_INVALID,
      `its subscribe is ${describeThrown(subscribe).slice(0, 80)}, not a function`,
      'declare subscribe(uri, changed) => stop, or leave it out',
    );
  const complete = checkComplete(
    field(candidate, 'complete'),
    template?.variables ?? [],
    'variables of its uriTemplate',
    fail,
  );
  const annotations = field(candidate, 'annotations') as ResourceAnnotations | undefined;
  if (annotations !== undefined && !validAnnotations(annotations))
    fail(
      ContractErrorCode.RESOURCE_ANNOTATIONS_INVALID,
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify answers undefined for undefined, a function or a symbol, whatever its declared type says
      `its annotations ${JSON.stringify(annotations)?.slice(0, 120) ?? String(annotations)} are not { audience?: ('user' | 'assistant')[], priority?: a number from 0 to 1 }`,
      "declare annotations: { audience: ['user'], priority: 0.5 }, or leave them out",
    );
  if (found.length > 0) return { violations: found };
  return {
    violations: found,
    resource: Object.freeze({
      kind: 'resource',
      name: name!,
      title,
      description,
      mimeType: mimeType as string,
      uri: uri as string | undefined,
      template,
      modes,
      annotations: annotations === undefined ? undefined : (toPlainJson(annotations) as ResourceAnnotations),
      subscribable: typeof subscribe === 'function',
      complete,
      canonicalSchema: canonicalJson({
        name,
        title,
        description,
        mimeType,
        ...(template === undefined ? { uri } : { uriTemplate }),
        subscribable: typeof subscribe === 'function',
      }),
      resource: candidate as DefinedResource,
    }),
  };
}
