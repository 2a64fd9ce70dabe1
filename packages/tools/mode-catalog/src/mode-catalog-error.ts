/**
 * Every code a {@link ModeCatalogError} carries, kept in one place. Codes are API: hosts branch on
 * them, so a code is never renamed or reused.
 */
export const ModeCatalogErrorCode = {
  /** The catalog file could not be read (missing, no permission…). */
  CATALOG_UNREADABLE: 'CATALOG_UNREADABLE',
  /** The catalog file is not valid JSON. */
  CATALOG_MALFORMED_JSON: 'CATALOG_MALFORMED_JSON',
  /** A field breaks the catalog schema (a bad id, a missing field, an unknown field…). */
  CATALOG_INVALID: 'CATALOG_INVALID',
  /** Two modes share a key. */
  DUPLICATE_MODE_KEY: 'DUPLICATE_MODE_KEY',
  /** Two modes share an id. */
  DUPLICATE_MODE_ID: 'DUPLICATE_MODE_ID',
  /** No mode is the default. */
  NO_DEFAULT_MODE: 'NO_DEFAULT_MODE',
  /** More than one mode is the default. */
  MULTIPLE_DEFAULT_MODES: 'MULTIPLE_DEFAULT_MODES',
  /** A mode key that the catalog does not hold was asked for. */
  UNKNOWN_MODE: 'UNKNOWN_MODE',
  /** A mode offers a tool that the registry does not hold. */
  UNREGISTERED_TOOL: 'UNREGISTERED_TOOL',
} as const;
export type ModeCatalogErrorCode = (typeof ModeCatalogErrorCode)[keyof typeof ModeCatalogErrorCode];

/** One problem: where it is, as a JSON path into the catalog (`$.modes[1].id`), and what is wrong there. */
export interface ModeCatalogIssue {
  readonly path: string;
  readonly problem: string;
}

/**
 * A catalog that cannot be used: thrown when it is loaded or checked at start-up, and when an unknown
 * mode key is asked for. These are configuration errors that must stop start-up, never results for a model.
 */
export class ModeCatalogError extends Error {
  override readonly name = 'ModeCatalogError';
  readonly code: ModeCatalogErrorCode;
  /** The catalog file's path, or `(in-memory catalog)`. */
  readonly source: string;
  /** Every problem found, in document order; the message spells out the first ones. */
  readonly issues: readonly ModeCatalogIssue[];

  constructor(
    code: ModeCatalogErrorCode,
    message: string,
    details: { readonly source: string; readonly issues?: readonly ModeCatalogIssue[]; readonly cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.source = details.source;
    this.issues = Object.freeze([...(details.issues ?? [])]);
  }
}

const MAX_ISSUES_IN_MESSAGE = 10;

/** `Mode catalog <source> is invalid: $.modes[1].id must …; $.modes[2].key …` */
export function invalidCatalog(
  code: ModeCatalogErrorCode,
  source: string,
  issues: readonly ModeCatalogIssue[],
): ModeCatalogError {
  const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((issue) => `${issue.path} ${issue.problem}`);
  const more = issues.length > MAX_ISSUES_IN_MESSAGE ? `; and ${issues.length - MAX_ISSUES_IN_MESSAGE} more` : '';
  return new ModeCatalogError(code, `Mode catalog ${source} is invalid: ${shown.join('; ')}${more}.`, {
    source,
    issues,
  });
}
