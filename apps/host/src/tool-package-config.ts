import { Type, type Static } from 'typebox';

/** How long a package may take to import, and then to run its `createDependencies`/`createTools`, by default. */
export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
/** Worker threads per isolated package, by default. */
export const DEFAULT_ISOLATED_WORKERS = 2;
/** The old-generation heap of each isolated worker, by default (MiB). */
export const DEFAULT_WORKER_HEAP_MB = 256;
/** What each isolated worker may hold outside the V8 heap (Buffers, ArrayBuffers), by default (MiB). */
export const DEFAULT_WORKER_EXTERNAL_MB = 256;

const ResourceLimits = Type.Object(
  {
    maxOldGenerationSizeMb: Type.Optional(
      Type.Integer({
        minimum: 16,
        description: 'Heap of each worker (MiB). A tool that needs more is stopped with RESOURCE_LIMIT.',
      }),
    ),
    maxYoungGenerationSizeMb: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Young generation of each worker (MiB).' }),
    ),
    codeRangeSizeMb: Type.Optional(Type.Integer({ minimum: 1, description: 'Code range of each worker (MiB).' })),
    stackSizeMb: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Stack of each worker (MiB).' })),
    maxExternalMemoryMb: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Memory each worker may hold outside the V8 heap (Buffers, ArrayBuffers; MiB, default ' +
          '256), measured after each call and once a second: a worker over it is replaced, and its ' +
          'calls fail with RESOURCE_LIMIT.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** One `toolPackages` entry written as an object. */
export const ToolPackageEntryObject = Type.Object(
  {
    package: Type.String({ minLength: 1, description: 'npm name or path of the tool package.' }),
    isolation: Type.Optional(
      Type.Union([Type.Literal('worker'), Type.Literal('none')], {
        description: '"worker": load and run the package in worker threads; "none" (the default): in the host process.',
      }),
    ),
    options: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: "Handed to the package's createDependencies and createTools as host.options.",
        },
      ),
    ),
    optional: Type.Optional(
      Type.Boolean({
        description:
          'When true, a package that fails to load is skipped with an error in the log instead of stopping start-up.',
      }),
    ),
    startupTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "This package's time limit for its import, and for its createDependencies and createTools.",
      }),
    ),
    workers: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 64, description: 'Worker threads for an isolated package (default 2).' }),
    ),
    resourceLimits: Type.Optional(ResourceLimits),
  },
  { additionalProperties: false },
);

/** A `toolPackages` entry: a plain string (in process), or the object form. */
export const ToolPackageEntry = Type.Union([Type.String({ minLength: 1 }), ToolPackageEntryObject]);
export type ToolPackageEntry = Static<typeof ToolPackageEntry>;

/** Resource limits of an isolated package's workers (node:worker_threads `resourceLimits`). */
export type WorkerResourceLimits = Static<typeof ResourceLimits>;

/** A tool package as the host will load it: every entry, string or object, in one shape. */
export interface ToolPackageConfig {
  /** As written: an npm name or a path. */
  readonly specifier: string;
  readonly isolation: 'worker' | 'none';
  /** Handed to createDependencies and createTools as `host.options`. */
  readonly options: Readonly<Record<string, unknown>>;
  readonly optional: boolean;
  /** Undefined: the host's `startupTimeoutMs`. */
  readonly startupTimeoutMs: number | undefined;
  readonly workers: number;
  readonly resourceLimits: WorkerResourceLimits;
}

/**
 * Turns the configured entries into one shape. A package may be listed more than once with different
 * `options` (one MCP bridge per server); the same package with the same options twice is a mistake,
 * and throws a message naming it.
 */
export function normaliseToolPackages(entries: readonly ToolPackageEntry[], where: string): ToolPackageConfig[] {
  const seen = new Set<string>();
  return entries.map((entry) => {
    const object = typeof entry === 'string' ? { package: entry } : entry;
    const key = JSON.stringify([object.package, object.options ?? {}]);
    if (seen.has(key))
      throw new Error(
        `toolPackages lists "${object.package}" twice${object.options ? ' with the same options' : ''}${where}. Fix: list each tool package once.`,
      );
    seen.add(key);
    return {
      specifier: object.package,
      isolation: object.isolation ?? 'none',
      options: (object.options ?? {}) as Record<string, unknown>,
      optional: object.optional ?? false,
      startupTimeoutMs: object.startupTimeoutMs,
      workers: object.workers ?? DEFAULT_ISOLATED_WORKERS,
      resourceLimits: object.resourceLimits ?? {},
    };
  });
}
