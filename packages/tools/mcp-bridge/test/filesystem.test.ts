import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeErrorCode } from '../src/index.js';
import { bridgeHarness, FILESYSTEM, text } from './servers.js';

describe('server-filesystem over stdio, confined to a temporary folder', () => {
  let root: string;
  let outside: string;
  let h: Awaited<ReturnType<typeof bridgeHarness>>;
  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'aptix-bridge-fs-')));
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'aptix-bridge-outside-')));
    writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n');
    writeFileSync(join(outside, 'secret.txt'), 'not for the model');
    h = await bridgeHarness({ name: 'files', stdio: { command: process.execPath, args: [FILESYSTEM, root] } });
  });
  afterAll(async () => {
    await h?.bridge.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('offers its tools, with their annotations', () => {
    expect(h.registry.names()).toEqual(
      expect.arrayContaining([
        'files_read_text_file',
        'files_write_file',
        'files_list_directory',
        'files_list_allowed_directories',
      ]),
    );
    expect(h.registry.get('files_read_text_file')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(h.registry.get('files_write_file')!.annotations?.readOnlyHint).toBe(false);
  });

  it('reads and writes inside the folder it was given', async () => {
    const read = await h.call('files_read_text_file', { path: join(root, 'notes.txt') });
    expect(text(read.value)).toContain('second line');
    const written = await h.call('files_write_file', { path: join(root, 'new.txt'), content: 'written through Aptix' });
    expect(written.successful).toBe(true);
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('written through Aptix');
  });

  it("reports the server's refusal to leave the folder as REMOTE_TOOL_ERROR, with its message", async () => {
    const refused = await h.call('files_read_text_file', { path: join(outside, 'secret.txt') });
    expect(refused.successful).toBe(false);
    expect(refused.errors[0]?.code).toBe(BridgeErrorCode.REMOTE_TOOL_ERROR);
    expect(refused.errors[0]?.message).toMatch(/access denied|outside allowed/i);
    expect(JSON.stringify(refused)).not.toContain('not for the model');
  });
});
