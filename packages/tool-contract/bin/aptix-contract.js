#!/usr/bin/env node
// `aptix-contract`: runs the contract kit (@aptix/tool-contract/testing) over one tool package's built
// entry and prints the report. The Nx `contract` target runs this too.
// Usage: aptix-contract [package-dir] [--update] [--entry <file>] [--json]
// Exit code: 0 when the package keeps the contract, 1 when it breaks it, 2 when it could not be checked.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    update: { type: 'boolean', short: 'u', default: false },
    entry: { type: 'string' },
    json: { type: 'boolean', default: false },
    // The command the report names to update the snapshot; the Nx target passes its own.
    'update-command': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const USAGE = `Usage: aptix-contract [package-dir] [options]
  (the package folder defaults to the current one; in an Nx workspace with @aptix/nx-plugin: npx nx run <project>:contract [options])

Checks every tool the package's built entry exports against the Aptix tool contract, and compares
their schemas with the package's committed tool-schemas.json.

Options:
  -u, --update    write tool-schemas.json from the current schemas instead of comparing (then add a changeset)
  --entry <file>  check this module instead of the package's entry (relative to the package)
  --json          print the report as JSON
  -h, --help      show this help`;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length > 1) {
  console.error(USAGE);
  process.exit(2);
}
const packageDir = resolve(positionals[0] ?? '.');

/** The kit of this installation of @aptix/tool-contract (built next to this file). */
async function loadKit() {
  try {
    return await import('../dist/testing/index.js');
  } catch (error) {
    throw new Error(
      '@aptix/tool-contract is not built: dist/testing/index.js is missing. Install @aptix/tool-contract from npm, or in the Aptix repository run `npx nx run @aptix/tool-contract:build`.',
      { cause: error },
    );
  }
}

try {
  const kit = await loadKit();
  const report = await kit.verifyToolPackage(packageDir, {
    update: values.update,
    entry: values.entry,
    updateCommand: values['update-command'],
  });
  console.log(values.json ? JSON.stringify(report, null, 2) : kit.formatToolPackageReport(report));
  process.exitCode = report.ok ? 0 : 1;
} catch (error) {
  console.error(`The contract of ${packageDir} could not be checked:`, error);
  process.exitCode = 2;
}
// Tools may leave timers or handles behind (a hung garbage call, a pool): do not wait for them.
setImmediate(() => process.exit());
