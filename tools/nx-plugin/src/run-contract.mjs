#!/usr/bin/env node
// The `contract` target: runs `aptix-contract` from the @aptix/tool-contract that the checked package
// itself depends on, so each package is checked by the kit version it was written against.
// Usage: node run-contract.mjs <package-dir> [--update] [--entry <file>] [--json]
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const packageDir = resolve(process.argv.slice(2).find((arg) => !arg.startsWith('-')) ?? '.');
let contractRoot;
try {
  contractRoot = dirname(createRequire(join(packageDir, 'package.json')).resolve('@aptix/tool-contract/package.json'));
} catch {
  contractRoot = dirname(createRequire(import.meta.url).resolve('@aptix/tool-contract/package.json'));
}
await import(pathToFileURL(join(contractRoot, 'bin', 'aptix-contract.js')).href);
