/** What became of one remote tool at start-up. */
export interface BridgedToolReport {
  readonly remoteName: string;
  /** The Aptix name, when the tool is offered. */
  readonly name: string | undefined;
  readonly offered: boolean;
  /** Offered with OpenAI `strict: true`. */
  readonly strict: boolean;
  /** Why strict mode cannot take the schema (the tool is then offered with `strict: false`). */
  readonly strictProblems: readonly string[];
  /** What the schema conversion changed. */
  readonly notes: readonly string[];
  /** Why the tool is not offered. */
  readonly skipped: readonly string[];
}
