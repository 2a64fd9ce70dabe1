/** The optional per-client rate limit, through a real `aptix serve`: per key name, or per address without keys. */
import { describe, expect, it } from 'vitest';
import { startHostWithConfig } from './support.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);

async function get(url: string, path: string, key?: string) {
  const response = await fetch(url + path, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: (await response.json()) as { error?: { code: string; message: string } },
  };
}

describe('rate limit', () => {
  it('limits each API key on its own, answers 429 RATE_LIMITED with retry-after, and never limits the probes', async () => {
    const { host, space } = await startHostWithConfig(
      { rateLimit: { max: 3, timeWindowMs: 60_000 } },
      { APTIX_API_KEYS: `alice=${A},bob=${B}` },
    );
    try {
      for (let i = 0; i < 3; i += 1) expect((await get(host.url, '/v1/modes', A)).status).toBe(200);
      const limited = await get(host.url, '/v1/tools', A);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.stringContaining('Retry in') } });
      expect(Number(limited.retryAfter)).toBeGreaterThan(0);
      // Another key is another client, even from the same address.
      expect((await get(host.url, '/v1/modes', B)).status).toBe(200);
      for (let i = 0; i < 10; i += 1) {
        expect((await get(host.url, '/healthz')).status).toBe(200);
        expect((await get(host.url, '/readyz')).status).toBe(200);
      }
      expect((await get(host.url, '/v1/modes')).status).toBe(401);
    } finally {
      await host.stop();
      space.cleanup();
    }
  });

  it('limits by address on a host without keys, and is off unless configured', async () => {
    const { host, space } = await startHostWithConfig({ rateLimit: { max: 2 } });
    const unlimited = await startHostWithConfig({});
    try {
      expect((await get(host.url, '/v1/modes')).status).toBe(200);
      expect((await get(host.url, '/v1/modes')).status).toBe(200);
      expect((await get(host.url, '/v1/modes')).status).toBe(429);
      for (let i = 0; i < 20; i += 1) expect((await get(unlimited.host.url, '/v1/modes')).status).toBe(200);
    } finally {
      await host.stop();
      await unlimited.host.stop();
      space.cleanup();
      unlimited.space.cleanup();
    }
  });
});
