import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContractCheckCode } from './codes.js';
import { checkSchemaSnapshot, schemaSnapshotText } from './schema-snapshot.js';

const hello = JSON.stringify({
  type: 'function',
  name: 'agent_hello',
  description: 'Greets.',
  parameters: { type: 'object', properties: { name: { type: 'string', description: 'Name.' } }, required: ['name'] },
});
const helloCanonical = JSON.stringify({
  description: 'Greets.',
  name: 'agent_hello',
  parameters: { properties: { name: { description: 'Name.', type: 'string' } }, required: ['name'], type: 'object' },
  type: 'function',
});
const ping = JSON.stringify({
  description: 'Pongs.',
  name: 'agent_ping',
  parameters: { properties: {}, required: [], type: 'object' },
  type: 'function',
});

describe('schema snapshots', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'aptix-snapshot-'));
    file = join(dir, 'tool-schemas.json');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes canonical JSON: tools and keys sorted, two spaces, a final newline', () => {
    expect(schemaSnapshotText({ agent_ping: ping, agent_hello: hello })).toBe(
      `${JSON.stringify({ agent_hello: JSON.parse(helloCanonical), agent_ping: JSON.parse(ping) }, null, 2)}\n`,
    );
  });

  it('fails when there is no snapshot, saying how to make one', () => {
    const result = checkSchemaSnapshot({ file, schemas: { agent_hello: helloCanonical }, packageName: '@acme/tools' });
    expect(result.status).toBe('missing');
    expect(result.violations).toEqual([
      {
        code: ContractCheckCode.SCHEMA_SNAPSHOT_MISSING,
        message: expect.stringMatching(
          /^@acme\/tools has no schema snapshot \(.*tool-schemas\.json\)\. .* Fix: run npx aptix-contract --update and commit the file\.$/,
        ),
      },
    ]);
    expect(existsSync(file)).toBe(false);
  });

  it('writes it on update, then finds it up to date', () => {
    expect(
      checkSchemaSnapshot({ file, schemas: { agent_hello: helloCanonical }, packageName: '@acme/tools', update: true }),
    ).toMatchObject({ status: 'written', violations: [], warnings: [] });
    expect(readFileSync(file, 'utf8')).toBe(schemaSnapshotText({ agent_hello: helloCanonical }));
    expect(checkSchemaSnapshot({ file, schemas: { agent_hello: helloCanonical }, packageName: '@acme/tools' })).toEqual(
      { status: 'up-to-date', changed: [], violations: [], warnings: [] },
    );
  });

  it('fails on a changed, a new and a removed schema: an API change that needs a changeset', () => {
    writeFileSync(file, schemaSnapshotText({ agent_hello: helloCanonical, agent_gone: ping }));
    const changed = helloCanonical.replace('Name.', 'Full name.');
    const result = checkSchemaSnapshot({
      file,
      schemas: { agent_hello: changed, agent_ping: ping },
      packageName: '@acme/tools',
      updateCommand: 'npm run contract -- --update',
    });
    expect(result.status).toBe('differs');
    expect(result.changed).toEqual(['agent_gone', 'agent_hello', 'agent_ping']);
    expect(result.violations.map((violation) => violation.message)).toEqual([
      expect.stringMatching(/^The schema of agent_gone is in the snapshot but no longer exported\./),
      expect.stringMatching(
        new RegExp(
          String.raw`^The schema of agent_hello differs from the snapshot ` +
            String.raw`\(parameters\.properties\.name\.description: "Name\." → "Full name\."\)\. A schema change ` +
            String.raw`is an API change for every model using the tool: .* It needs a changeset \(npx changeset: ` +
            String.raw`.*\)\. If the change is intended: run npm run contract -- --update, then commit ` +
            String.raw`tool-schemas\.json with the changeset\.$`,
        ),
      ),
      expect.stringMatching(/^The schema of agent_ping is new: it is not in the snapshot\./),
    ]);
    expect(result.violations.every((violation) => violation.code === ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH)).toBe(
      true,
    );
  });

  it('fails on a snapshot with the right schemas in the wrong form', () => {
    writeFileSync(file, JSON.stringify({ agent_hello: JSON.parse(hello) }));
    expect(
      checkSchemaSnapshot({ file, schemas: { agent_hello: helloCanonical }, packageName: '@acme/tools' }).violations,
    ).toEqual([
      {
        code: ContractCheckCode.SCHEMA_SNAPSHOT_MISMATCH,
        message: expect.stringMatching(/holds the right schemas but not in canonical form/),
      },
    ]);
  });

  it('does not report tools whose schema could not be read as removed, and refuses to update then', () => {
    writeFileSync(file, schemaSnapshotText({ agent_hello: helloCanonical, agent_ping: ping }));
    expect(
      checkSchemaSnapshot({
        file,
        schemas: { agent_hello: helloCanonical },
        packageName: '@acme/tools',
        incomplete: true,
      }).violations,
    ).toEqual([]);
    const update = checkSchemaSnapshot({
      file,
      schemas: { agent_hello: helloCanonical },
      packageName: '@acme/tools',
      incomplete: true,
      update: true,
    });
    expect(update.status).toBe('not-updated');
    expect(readFileSync(file, 'utf8')).toBe(schemaSnapshotText({ agent_hello: helloCanonical, agent_ping: ping }));
  });

  it('on update, warns when no pending changeset names the package', () => {
    mkdirSync(join(dir, '.changeset'));
    writeFileSync(join(dir, '.changeset', 'config.json'), '{}');
    writeFileSync(join(dir, '.changeset', 'README.md'), '@acme/tools: mentioned outside front matter');
    writeFileSync(file, schemaSnapshotText({ agent_hello: helloCanonical }));
    const changed = helloCanonical.replace('Name.', 'Full name.');
    const first = checkSchemaSnapshot({
      file,
      schemas: { agent_hello: changed },
      packageName: '@acme/tools',
      update: true,
    });
    expect(first.warnings).toEqual([
      {
        code: ContractCheckCode.CHANGESET_MISSING,
        message: expect.stringMatching(
          /^@acme\/tools: the schema snapshot changed \(agent_hello\) and no changeset mentions @acme\/tools\./,
        ),
      },
    ]);

    writeFileSync(
      join(dir, '.changeset', 'brave-tools.md'),
      "---\n'@acme/tools': major\n---\n\nagent_hello's name now wants the full name.\n",
    );
    const again = checkSchemaSnapshot({
      file,
      schemas: { agent_hello: helloCanonical },
      packageName: '@acme/tools',
      update: true,
    });
    expect(again).toMatchObject({ status: 'written', warnings: [] });
  });
});
