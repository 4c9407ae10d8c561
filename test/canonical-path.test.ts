// Security round 4 (issue 33): a path means one thing to every check. The front door decodes percent-encoded
// unreserved characters once (src/http/canonical-path.ts), refuses %2F, %5C and %00, and routes and checks on that
// one path: the client-metadata host check, the public rate limits and routing see the same route.
import { SELF } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { canonicalPath } from '../src/http/canonical-path';
import { page, signedIn } from './admin-client';
import { authorizeUrl, ErrorBodySchema, OAuthErrorSchema, ORIGIN, pkcePair, TestBrowser } from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Every outbound URL the Worker asks for while `body` runs, none of them answered (no network in tests). */
async function outboundDuring(body: () => Promise<void>): Promise<string[]> {
  const calls: string[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL) => {
    calls.push(input instanceof Request ? input.url : String(input));
    throw new TypeError('network connection refused in tests');
  });
  await body();
  vi.restoreAllMocks();
  return calls;
}

describe('canonicalPath', () => {
  it.each([
    ['/%61uthorize', '/authorize'],
    ['/%61dmin/%6C%6F%67%69%6E', '/admin/login'],
    ['/oauth/%74oken', '/oauth/token'],
    ['/%7Euser/%2D%2e%5F', '/~user/-._'],
    ['/v1/data/%2e%2e/%2E%2E/admin/login', '/admin/login'],
    ['/admin/search/table%3Abrand_acme%3Afact__orders', '/admin/search/table%3Abrand_acme%3Afact__orders'],
    ['/admin/search/a%20b%25c%C3%A9', '/admin/search/a%20b%25c%C3%A9'],
    ['/%2561uthorize', '/%2561uthorize'],
    ['//%65vil.example/x', '//evil.example/x'],
    ['/plain/path', '/plain/path'],
  ])('%s is %s', (raw, canonical) => {
    expect(canonicalPath(raw)).toEqual({ ok: true, pathname: canonical });
    // Canonical once is canonical for good.
    expect(canonicalPath(canonical)).toEqual({ ok: true, pathname: canonical });
  });

  it.each(['/admin%2Flogin', '/admin%2flogin', '/a%5Cb', '/a%5cb', '/a%00b'])('%s is refused', (raw) => {
    expect(canonicalPath(raw).ok).toBe(false);
  });
});

describe('the front door routes and checks on the canonical path', () => {
  it('/%61uthorize with a client_id on a loopback address is refused before any connection is made', async () => {
    const clientId = 'https://127.0.0.1:9443/oauth/client.json';
    const { challenge } = await pkcePair();
    const url = new URL(authorizeUrl({ clientId, challenge, redirectUri: 'http://localhost:5000/callback' }), ORIGIN);
    const calls = await outboundDuring(async () => {
      for (const spelled of ['/%61uthorize', '/%61%75%74%68%6f%72%69%7a%65', '/authorize']) {
        const res = await new TestBrowser('198.51.100.81').get(`${spelled}${url.search}`);
        expect(res.status, spelled).toBe(400);
        const body = ErrorBodySchema.parse(await res.json());
        expect(body.error.code).toBe('VALIDATION');
        expect(body.error.message).toMatch(/not a public/);
      }
      const token = await SELF.fetch(`${ORIGIN}/oauth/%74oken`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x:y:z', client_id: clientId, code_verifier: 'v'.repeat(43) }),
      });
      expect(token.status).toBe(401);
      expect(OAuthErrorSchema.parse(await token.json()).error).toBe('invalid_client');
    });
    expect(calls).toEqual([]);
  });

  it('/%61dmin/login is counted with /admin/login by the sign-in limit', async () => {
    const ErrorBody = z.object({ error: z.object({ code: z.string(), details: z.object({ limit: z.string() }) }) });
    // The pool simulates the binding in fixed 60-second windows: a run that straddles one is repeated once.
    for (let attempt = 0; ; attempt++) {
      const window = Math.floor(Date.now() / 60_000);
      const ip = `203.0.113.${200 + attempt}`;
      const get = (path: string) => SELF.fetch(`${ORIGIN}${path}`, { headers: { 'cf-connecting-ip': ip }, redirect: 'manual' });
      try {
        const answered = await Promise.all(Array.from({ length: 100 }, (_, i) => get(i % 2 === 0 ? '/admin/login' : '/%61dmin/login')));
        for (const res of answered) {
          expect(res.status).toBe(200);
          await res.body?.cancel();
        }
        for (const path of ['/%61dmin/login', '/admin/login', '/%61dmin/%6cogin']) {
          const res = await get(path);
          expect(res.status, path).toBe(429);
          expect(ErrorBody.parse(await res.json()).error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'sign-in' } });
        }
        return;
      } catch (err) {
        if (attempt > 0 || Math.floor(Date.now() / 60_000) === window) throw err;
      }
    }
  }, 60_000);

  it.each(['/admin%2Flogin', '/v1/data%2Fbrands', '/admin/search/a%5Cb', '/admin%00'])('%s is 400 VALIDATION', async (path) => {
    const res = await SELF.fetch(`${ORIGIN}${path}`);
    expect(res.status).toBe(400);
    const body = ErrorBodySchema.parse(await res.json());
    expect(body.error.code).toBe('VALIDATION');
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
  });

  it('encoded characters that are data keep working: a search item id with %3A', async () => {
    const acme = await signedIn(TEST_ADMINS.brand, '198.51.100.82');
    const title = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];
    const plain = await page(acme, '/admin/search/table:brand_acme:fact__orders');
    expect(title(plain)).toContain('fact__orders');
    expect(title(await page(acme, '/admin/search/table%3Abrand_acme%3Afact__orders'))).toBe(title(plain));
    // And the escapes of route names reach the same page.
    expect(title(await page(acme, '/%61dmin/search/table%3Abrand_acme%3Afact__orders'))).toBe(title(plain));
  });
});
