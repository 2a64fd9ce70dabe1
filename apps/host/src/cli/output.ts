/**
 * What a command prints. With `--json`, or when stdout is not a terminal, stdout holds exactly one
 * JSON document; logs always go elsewhere (stderr), so scripts can parse stdout as it is.
 */
export class Output {
  constructor(readonly json: boolean) {}

  /** The command's one document; `human` renders it for a terminal. */
  print(document: unknown, human?: (document: never) => string): void {
    const text = this.json
      ? JSON.stringify(document)
      : human
        ? human(document as never)
        : JSON.stringify(document, null, 2);
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** A failure: the error document on stdout in JSON mode, the message on stderr always. */
  fail(code: string, message: string): void {
    if (this.json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
    process.stderr.write(`aptix: ${message}\n`);
  }
}

/** Lays rows out in aligned columns. */
export function table(rows: ReadonlyArray<readonly string[]>): string {
  const widths = rows.reduce<number[]>(
    (acc, row) => row.map((cell, index) => Math.max(acc[index] ?? 0, cell.length)),
    [],
  );
  return rows
    .map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index]!))).join('  '))
    .join('\n');
}
