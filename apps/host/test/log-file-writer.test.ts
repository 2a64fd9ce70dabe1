import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogFileWriter } from '../src/log-file-writer.js';
import { scratch } from './support.js';

describe('the log file writer (lines gathered in one buffer, written together)', () => {
  const spaces: Array<ReturnType<typeof scratch>> = [];
  afterEach(() => spaces.splice(0).forEach((space) => space.cleanup()));

  function file(): { path: string; fd: number } {
    const space = scratch();
    spaces.push(space);
    const path = join(space.dir, 'lines.log');
    return { path, fd: openSync(path, 'a') };
  }

  it('writes every line whole and in order, non-ASCII text, lines past the batch size and lines longer than the buffer included', () => {
    const { path, fd } = file();
    const writer = new LogFileWriter(fd);
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) {
      // 2000 lines of about 100 bytes cross the 64 KiB batch several times, with multi-byte characters on the way.
      const text = i % 7 === 0 ? `é😀\u2028${'ü'.repeat(i % 40)}` : 'x'.repeat(i % 90);
      lines.push(`${JSON.stringify({ i, text })}\n`);
      if (i === 1000) lines.push(`${JSON.stringify({ long: '€'.repeat(40_000) })}\n`);
    }
    for (const line of lines) writer.write(line);
    writer.flushSync();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(lines.join(''));
  });

  it('keeps lines in memory until the delay ends or flush is asked for', async () => {
    const { path, fd } = file();
    const writer = new LogFileWriter(fd);
    writer.write('{"a":1}\n');
    expect(readFileSync(path, 'utf8')).toBe('');
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    writer.write('{"b":2}\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":2}\n');
    closeSync(fd);
  });
});
