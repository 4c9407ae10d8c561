import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CALLBACK, ORIGIN } from './oauth-client';
import { seedDemo } from './seed';

/**
 * The per-source rate limits of the unauthenticated endpoints, through the pool's simulation of the Rate Limiting
 * binding (wrangler.toml's [[ratelimits]]: register 10, token 60, sign-in pages 100 per 60 s). The simulation
 * counts in fixed 60-second windows, so a run that crosses a window boundary is repeated once with fresh sources.
 */

const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string(), requestId: z.string(), details: z.unknown() }) });

function register(ip: string | null): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (ip !== null) headers['cf-connecting-ip'] = ip;
  return SELF.fetch(`${ORIGIN}/oauth/register`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ client_name: 'Flood', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none' }),
  });
}

function token(ip: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'cf-connecting-ip': ip },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: 'u:g:nothing', client_id: 'nobody' }).toString(),
  });
}

function signInPage(ip: string, path: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}${path}`, { headers: { 'cf-connecting-ip': ip }, redirect: 'manual' });
}

async function expectLimited(res: Response, limit: string): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe('60');
  const body = ErrorBody.parse(await res.json());
  expect(body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit, retryAfterSeconds: 60 } });
  expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
}

/** Runs `body` with a fresh address tag inside one 60-second window (repeats once if it straddled a boundary). */
async function inOneWindow(body: (tag: number) => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const window = Math.floor(Date.now() / 60_000);
    try {
      await body(attempt);
      return;
    } catch (err) {
      if (attempt > 0 || Math.floor(Date.now() / 60_000) === window) throw err;
    }
  }
}

beforeAll(async () => {
  await seedDemo();
});

describe('per-source rate limits of the public endpoints', () => {
  it('/oauth/register: 10 per minute per address, then 429 RATE_LIMITED with Retry-After; other addresses unaffected', async () => {
    await inOneWindow(async (tag) => {
      const ip = `203.0.113.${210 + tag}`;
      const statuses = [];
      for (let i = 0; i < 10; i++) statuses.push((await register(ip)).status);
      expect(statuses).toEqual(Array(10).fill(201));
      await expectLimited(await register(ip), 'register');
      expect((await register(`203.0.113.${220 + tag}`)).status).toBe(201);
    });
  }, 60_000);

  it('an IPv6 /64 is one source', async () => {
    await inOneWindow(async (tag) => {
      for (let i = 0; i < 10; i++) expect((await register(`2001:db8:${tag}:7::${i + 1}`)).status).toBe(201);
      await expectLimited(await register(`2001:db8:${tag}:7:ffff::1`), 'register');
      expect((await register(`2001:db8:${tag}:8::1`)).status).toBe(201);
    });
  }, 60_000);

  it('/oauth/token: 60 per minute per address', async () => {
    await inOneWindow(async (tag) => {
      const ip = `203.0.113.${230 + tag}`;
      const answered = await Promise.all(Array.from({ length: 60 }, () => token(ip)));
      for (const res of answered) {
        expect(res.status).not.toBe(429);
        await res.body?.cancel();
      }
      await expectLimited(await token(ip), 'token');
    });
  }, 60_000);

  it('the sign-in pages share 100 per minute per address (GET and POST, /admin/login and /authorize)', async () => {
    await inOneWindow(async (tag) => {
      const ip = `203.0.113.${240 + tag}`;
      const answered = await Promise.all(
        Array.from({ length: 100 }, (_, i) => signInPage(ip, i % 2 === 0 ? '/admin/login' : '/authorize')),
      );
      for (const res of answered) {
        expect(res.status).not.toBe(429);
        await res.body?.cancel();
      }
      await expectLimited(await signInPage(ip, '/admin/login'), 'sign-in');
      await expectLimited(await signInPage(ip, '/authorize'), 'sign-in');
      const other = await signInPage(`203.0.113.${250 + tag}`, '/admin/login');
      expect(other.status).toBe(200);
      await other.body?.cancel();
    });
  }, 60_000);

  it('a request without CF-Connecting-IP or from loopback (local runs) is not limited', async () => {
    for (let i = 0; i < 12; i++) expect((await register(null)).status).toBe(201);
    for (let i = 0; i < 12; i++) expect((await register('127.0.0.1')).status).toBe(201);
  }, 60_000);
});
