#!/usr/bin/env node
// The `contract` target: runs `aptix-contract` from the @aptix/tool-contract that the checked package
// itself depends on, so each package is checked by the kit version it was written against.
// Usage: node run-contract.mjs <package-dir> [--update] [--entry <file>] [--json]
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const packageDir = resolve(
  args.find((arg, index) => !arg.startsWith('-') && !['--entry', '--update-command'].includes(args[index - 1])) ?? '.',
);
if (!args.includes('--entry') && !args.includes('--help') && !args.includes('-h')) refuseUnbuilt(packageDir);
let contractRoot;
try {
  contractRoot = dirname(createRequire(join(packageDir, 'package.json')).resolve('@aptix/tool-contract/package.json'));
} catch {
  contractRoot = dirname(createRequire(import.meta.url).resolve('@aptix/tool-contract/package.json'));
}
await import(pathToFileURL(join(contractRoot, 'bin', 'aptix-contract.js')).href);

/**
 * Stops, with a message of its own, when the package's JavaScript entry is missing: "not built" and
 * "built without JavaScript" (only declarations, as a tsconfig with emitDeclarationOnly: true builds)
 * need different fixes, and the kit alone would say "build the package first" to both.
 */
function refuseUnbuilt(dir) {
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    return; // the kit reports a missing or unreadable package.json
  }
  const entry = packageEntry(pkg);
  if (entry === undefined || existsSync(join(dir, entry))) return;
  const name = pkg.name ?? relative(process.cwd(), dir);
  const declarations = entry.replace(/\.(m|c)?js$/, '.d.$1ts');
  const where = relative(process.cwd(), dir) || '.';
  const message = existsSync(join(dir, declarations))
    ? `${name} is built without JavaScript: ${declarations} is there, ${entry} is not, so its ` +
      `build emitted declarations only. Fix: set "emitDeclarationOnly": false in the ` +
      `compilerOptions of ${join(where, 'tsconfig.lib.json')} (create-nx-workspace's ` +
      `tsconfig.base.json sets it to true), then build again.`
    : `${name} is not built: its entry ${entry} does not exist. Fix: build it first (the contract target of @aptix/nx-plugin builds it by itself).`;
  if (args.includes('--json')) {
    console.log(
      JSON.stringify(
        {
          packageName: name,
          packageDir: dir,
          entry: join(dir, entry),
          ok: false,
          tools: [],
          violations: [{ code: 'PACKAGE_IMPORT_FAILED', message }],
          warnings: [],
          snapshot: null,
        },
        null,
        2,
      ),
    );
  } else {
    console.log(`✗ ${message}`);
  }
  process.exit(1);
}

/** The package's JavaScript entry as Node imports it: `exports["."]` under node/import/default, else `main`, else index.js. */
function packageEntry(pkg) {
  const pick = (target) => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) return target.map(pick).find((found) => found !== undefined);
    if (target === null || typeof target !== 'object') return undefined;
    for (const [condition, value] of Object.entries(target)) {
      if (['node', 'import', 'module-sync', 'default'].includes(condition)) {
        const found = pick(value);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  const exported =
    pkg.exports === undefined
      ? undefined
      : typeof pkg.exports === 'object' &&
          pkg.exports !== null &&
          !Array.isArray(pkg.exports) &&
          Object.keys(pkg.exports).some((key) => key.startsWith('.'))
        ? pick(pkg.exports['.'])
        : pick(pkg.exports);
  return (exported ?? pkg.main ?? './index.js').replace(/^\.\//, '');
}
