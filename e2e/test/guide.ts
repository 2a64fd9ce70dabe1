import type { Run } from './support.js';

/** One step of a guide: a shell block to run (to completion, or as a server left running), or a file to write. */
export type Step =
  | { kind: 'sh'; script: string; id?: string; fails: boolean; serve: boolean }
  | { kind: 'file'; path: string; content: string };

/**
 * Reads a guide's steps, in order: ```sh e2e blocks (`id=name` keeps the output, `fails` expects a
 * non-zero exit, `serve` starts a server that stays up) and ```lang file=path blocks.
 */
export function guideSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  for (const match of markdown.matchAll(/```(\w+)([^\n]*)\n([\s\S]*?)```/g)) {
    const [, lang, info, body] = match as unknown as [string, string, string, string];
    const file = /\bfile=(\S+)/.exec(info)?.[1];
    if (file) steps.push({ kind: 'file', path: file, content: body });
    else if (lang === 'sh' && /\be2e\b/.test(info)) {
      const id = /\bid=(\S+)/.exec(info)?.[1];
      steps.push({
        kind: 'sh',
        script: body,
        ...(id ? { id } : {}),
        fails: /\bfails\b/.test(info),
        serve: /\bserve\b/.test(info),
      });
    }
  }
  return steps;
}

/** What following the guide left: the folder, the kept outputs, and what the MCP clients saw. */
export interface GuideOutcome {
  readonly work: string;
  readonly outputs: Map<string, Run>;
  readonly mcp: { readonly http: string[]; readonly stdioTools: string[]; readonly stdioResult: unknown };
}
