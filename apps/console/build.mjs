// Bundles the console into dist/: one script, one stylesheet, the page. No CDN, no inline script:
// the host serves these files itself, under a strict Content-Security-Policy.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const out = join(root, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'console.js'),
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(root, 'static', 'index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'static', 'console.css'), join(out, 'console.css'));
