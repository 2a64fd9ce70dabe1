import { rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The code of the fenced block that follows `<!-- example: NAME -->` in a Markdown file, as written.
 * @throws {Error} naming the file and the example when there is no such block.
 */
export async function docsExample(markdownFile: string, name: string): Promise<string> {
  const markdown = await readFile(markdownFile, 'utf8');
  const marker = `<!-- example: ${name} -->`;
  const at = markdown.indexOf(marker);
  const block = at === -1 ? null : /^```[a-z]*\n([\s\S]*?)^```$/m.exec(markdown.slice(at + marker.length));
  if (block === null) throw new Error(`${markdownFile} has no fenced code block after "${marker}".`);
  return block[1]!;
}

/**
 * Imports the example `name` of a Markdown file, verbatim, as a module written into `dir` (so its
 * imports resolve from there, as from the reader's project), then deletes the file.
 * @example const { ask } = await importDocsExample<{ ask: (model: LanguageModel, q: string) => Promise<string> }>(guide, 'ai-sdk', import.meta.dirname);
 */
export async function importDocsExample<T>(markdownFile: string, name: string, dir: string): Promise<T> {
  const file = join(dir, `.docs-example-${name}-${process.pid}.ts`);
  writeFileSync(file, await docsExample(markdownFile, name));
  try {
    return (await import(pathToFileURL(file).href)) as T;
  } finally {
    rmSync(file, { force: true });
  }
}
