import type { CompleteFunction, UnitContext } from './prompt.js';

/**
 * Resources: documents a package offers by URI (files, records, documentation), read on request, at a
 * fixed URI or at the URIs of a template. See {@link defineResource}.
 */

/** A text document, as `resources/read` answers it. */
export interface TextResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text: string;
}

/** A binary document: `blob` is standard base64. */
export interface BlobResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly blob: string;
}

export type ResourceContents = TextResourceContents | BlobResourceContents;

/** What `read` returns: text (with the resource's media type), bytes (sent as base64), or the contents themselves. */
export type ResourceReadOutput = string | Uint8Array | ResourceContents | readonly ResourceContents[];

/** What `read` is asked: the URI, and a template's variables (percent-decoded; `{}` for a fixed URI). */
export interface ResourceRequest {
  readonly uri: string;
  readonly variables: Readonly<Record<string, string>>;
}

/** MCP hints about a resource. */
export interface ResourceAnnotations {
  readonly audience?: readonly ('user' | 'assistant')[];
  /** 0 (least) to 1 (most important). */
  readonly priority?: number;
}

interface ResourceFields<TName extends string> {
  /** lowercase_snake_case, at most 64 characters: the tool name rule. */
  readonly name: TName;
  /** A short human-readable name, shown by clients; defaults to the name. */
  readonly title?: string;
  readonly description?: string;
  /** The media type of what `read` returns (`text/markdown`, `application/json`, `image/png`). */
  readonly mimeType: string;
  /** The modes whose sessions see the resource, by key; left out, every mode does. */
  readonly modes?: readonly string[];
  readonly annotations?: ResourceAnnotations;
  /** The document(s) at `request.uri`. A throw or a time-out fails this read only. */
  read(request: ResourceRequest, context: UnitContext): ResourceReadOutput | Promise<ResourceReadOutput>;
  /**
   * Optional: makes the resource subscribable. Called when the first client subscribes to `uri`; call
   * `changed()` whenever the document changes, and return what stops watching (called when the last
   * subscriber leaves, or the host stops).
   */
  subscribe?(uri: string, changed: () => void): (() => void) | void;
}

/** The argument of {@link defineResource}: a fixed `uri`, or a `uriTemplate` with completions for its variables. */
export type ResourceDefinition<TName extends string> = ResourceFields<TName> &
  (
    | {
        /** The resource's one URI, absolute with a scheme: `acme://docs/readme`. */
        readonly uri: string;
        readonly uriTemplate?: never;
        readonly complete?: never;
      }
    | {
        /** An RFC 6570 level-1 template (`acme://users/{id}`): one variable per path segment. */
        readonly uriTemplate: string;
        readonly uri?: never;
        /** Completions for the template's variables by name. */
        readonly complete?: Readonly<Record<string, CompleteFunction>>;
      }
  );

/** A resource made by {@link defineResource} (or a plain object of this shape): list it in a package's `resources`. */
export type DefinedResource<TName extends string = string> = ResourceDefinition<TName> & { readonly kind: 'resource' };

/**
 * Types a package's resource list.
 * @example export const resources = [ReadmeResource, UserResource] as const satisfies ResourceList;
 */
export type ResourceList = readonly DefinedResource[];

/**
 * Defines a resource. The host checks it when the package loads (the name rule, an absolute URI or a
 * level-1 template, a media type, a read function), refuses URIs with `.`/`..` segments and template
 * variables that would climb out of their segment, and bounds `read` in time and size.
 *
 * @example
 * export const UserResource = defineResource({
 *   name: 'acme_user',
 *   uriTemplate: 'acme://users/{id}',
 *   mimeType: 'application/json',
 *   read: async ({ variables }) => JSON.stringify(await users.get(variables.id)),
 *   complete: { id: (typed) => users.idsStartingWith(typed) },
 * });
 */
export function defineResource<const TName extends string>(
  definition: ResourceDefinition<TName>,
): DefinedResource<TName> {
  return Object.freeze({ ...definition, kind: 'resource' as const }) as DefinedResource<TName>;
}
