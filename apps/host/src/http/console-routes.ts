import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { AnyFastifyInstance } from './fastify-instance.js';

/** The console's page, script and stylesheet: a strict policy, no inline script, nothing from elsewhere. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the built console is, or undefined when @aptix/console is not installed or not built. */
export function consoleAssets(): string | undefined {
  try {
    const folder = join(dirname(createRequire(import.meta.url).resolve('@aptix/console/package.json')), 'dist');
    return existsSync(join(folder, 'index.html')) ? folder : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The web console at `/console/`: static files built by @aptix/console, served by the host itself. The
 * page is public (it asks for the API key itself); everything it shows comes from the /v1 API, which
 * needs the key as always.
 */
export async function registerConsoleRoutes(app: AnyFastifyInstance): Promise<void> {
  const root = consoleAssets();
  app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/', 302));
  if (root === undefined) {
    app.get('/console/*', { schema: { hide: true } }, (_request, reply) =>
      reply.code(503).send({
        error: {
          code: 'CONSOLE_NOT_BUILT',
          message:
            'The console is not built: run `npm run build` (or `npx nx run @aptix/console:build`) and restart the host.',
        },
      }),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: ['index.html'],
    wildcard: true,
    decorateReply: false,
    setHeaders(response) {
      response.setHeader('content-security-policy', CONSOLE_CSP);
      response.setHeader('x-content-type-options', 'nosniff');
      response.setHeader('referrer-policy', 'no-referrer');
      response.setHeader('cache-control', 'no-cache');
    },
  });
}
