#!/usr/bin/env node
// `npm run pack:all`: packs every public workspace package (the ones a release publishes) into one
// folder, ./packed by default, so `npm install ./packed/*.tgz` installs Aptix without the npm registry.
// Run after a build (the npm script builds first). Usage: node scripts/pack-all.mjs [folder]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const destination = resolve(process.argv[2] ?? join(root, 'packed'));
mkdirSync(destination, { recursive: true });
const workspaces = JSON.parse(
  execFileSync('npm', ['query', '.workspace'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }),
);
const packed = [];
for (const pkg of workspaces.filter((candidate) => candidate.private !== true)) {
  const manifest = JSON.parse(readFileSync(join(pkg.path, 'package.json'), 'utf8'));
  if (manifest.main?.startsWith('./dist/') && !existsSync(join(pkg.path, manifest.main))) {
    console.error(
      `${pkg.name} is not built (${manifest.main} is missing). Fix: npx nx run-many -t build, or npm run pack:all, which builds first.`,
    );
    process.exit(1);
  }
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: pkg.path, encoding: 'utf8' }),
  );
  packed.push(info.filename);
}
console.log(
  `Packed ${packed.length} packages into ${destination}:\n${packed.map((file) => `  ${file}`).join('\n')}\nInstall them with: npm install ${destination}/*.tgz`,
);
