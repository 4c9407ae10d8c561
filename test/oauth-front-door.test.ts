import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { CORS_ALLOW_HEADERS } from '../src/http/cors';
import { ErrorBodySchema, MCP_URL, ORIGIN } from './oauth-client';
import { seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

const INSPECTOR = 'http://localhost:6274';
const ALLOWED = 'https://inspector.example';

/** The Worker's own fetch with a given ALLOWED_ORIGINS (the deployed default is empty). */
async function withAllowlist(allowlist: string, request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ALLOWED_ORIGINS: allowlist }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

function mcpPost(headers: Record<string, string>): Request {
  return new Request(MCP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

function restGet(path: string, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}${path}`, { headers });
}

function preflight(url: string, origin: string): Request {
  return new Request(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id',
    },
  });
}

function exposed(res: Response): string[] {
  return (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
}

describe('REST 401s carry WWW-Authenticate: Bearer (RFC 6750)', () => {
  it('no credentials: a bare challenge, on every REST route', async () => {
    for (const [method, path] of [
      ['GET', '/v1/data/brands'],
      ['GET', '/v1/data/reports?brandId=brand_acme'],
      ['GET', '/v1/data/queries?brandId=brand_acme'],
      ['POST', '/v1/data/query'],
      ['POST', '/v1/data/feedback'],
    ] as const) {
      const res = await SELF.fetch(`${ORIGIN}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBe('Bearer realm="Warehouse Query API"');
      const body = ErrorBodySchema.parse(await res.json());
      expect(body.error.code).toBe('UNAUTHORIZED');
      expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
    }
  });

  it('a token that was sent and refused: error="invalid_token"; not a bearer header: error="invalid_request"', async () => {
    for (const path of ['/v1/data/brands', '/v1/data/reports/rpt_unknown', '/v1/data/queries']) {
      const res = await SELF.fetch(restGet(path, { authorization: 'Bearer wqk_notARealKey000000000000000000000000000000' }));
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBe('Bearer realm="Warehouse Query API", error="invalid_token"');
    }
    const basic = await SELF.fetch(restGet('/v1/data/brands', { authorization: 'Basic dXNlcjpwYXNz' }));
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe('Bearer realm="Warehouse Query API", error="invalid_request"');
  });

  it('no challenge where nothing is refused, and the MCP endpoint keeps its discovery challenge', async () => {
    const ok = await SELF.fetch(restGet('/v1/data/brands', { authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('www-authenticate')).toBeNull();
    const doc = await SELF.fetch(restGet('/v1/data/openapi.json'));
    expect(doc.status).toBe(200);
    const mcp = await SELF.fetch(mcpPost({}));
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="OAuth", resource_metadata="https:\/\/api\.test\/\.well-known\/oauth-protected-resource\/v1\/data\/mcp"/,
    );
  });
});

describe('Origin validation on the MCP endpoint (default: no browser origins allowed)', () => {
  it('refuses a foreign browser origin with 403 in our error shape, even with a valid key', async () => {
    const res = await SELF.fetch(mcpPost({ origin: 'https://evil.example', authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(res.status).toBe(403);
    const body = ErrorBodySchema.parse(await res.json());
    expect(body.error.code).toBe('FORBIDDEN_ORIGIN');
    expect(body.error.message).toContain('https://evil.example');
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    // "null" (sandboxed frames, file://) is a browser origin too.
    expect((await SELF.fetch(mcpPost({ origin: 'null', authorization: `Bearer ${TEST_KEYS.org}` }))).status).toBe(403);
  });

  it("lets requests without Origin through (server-to-server), and the service's own origin", async () => {
    expect((await SELF.fetch(mcpPost({ authorization: `Bearer ${TEST_KEYS.org}` }))).status).toBe(200);
    const own = await SELF.fetch(mcpPost({ origin: ORIGIN, authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBe(ORIGIN);
  });

  it('REST answers a foreign origin without CORS headers (the browser keeps the response from the page)', async () => {
    const res = await SELF.fetch(restGet('/v1/data/brands', { origin: 'https://evil.example', authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await SELF.fetch(preflight(`${ORIGIN}/v1/data/brands`, 'https://evil.example'));
    expect(pre.status).toBe(403);
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS for allowlisted origins (ALLOWED_ORIGINS)', () => {
  const allowlist = `${ALLOWED}, ${INSPECTOR}`;

  it('answers preflights on MCP and REST with the headers MCP clients send', async () => {
    for (const url of [MCP_URL, `${ORIGIN}/v1/data/brands`, `${ORIGIN}/v1/data/query`]) {
      const res = await withAllowlist(allowlist, preflight(url, INSPECTOR));
      expect(res.status, url).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
      const allowHeaders = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim());
      for (const h of [
        'Authorization',
        'Content-Type',
        'Mcp-Protocol-Version',
        'Mcp-Session-Id',
        'Mcp-Method',
        'Mcp-Name',
        'Last-Event-ID',
      ]) {
        expect(allowHeaders).toContain(h);
      }
      expect(allowHeaders).toEqual([...CORS_ALLOW_HEADERS]);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toContain('Origin');
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });

  it('MCP and REST responses (including 401s) carry the CORS headers and expose the ones clients read', async () => {
    const ok = await withAllowlist(allowlist, mcpPost({ origin: ALLOWED, authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(exposed(ok)).toEqual(expect.arrayContaining(['x-request-id', 'www-authenticate', 'mcp-session-id']));

    const mcp401 = await withAllowlist(allowlist, mcpPost({ origin: ALLOWED }));
    expect(mcp401.status).toBe(401);
    expect(mcp401.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(mcp401.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(exposed(mcp401)).toContain('www-authenticate');

    const rest401 = await withAllowlist(allowlist, restGet('/v1/data/brands', { origin: INSPECTOR }));
    expect(rest401.status).toBe(401);
    expect(rest401.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
    expect(rest401.headers.get('www-authenticate')).toBe('Bearer realm="Warehouse Query API"');
    expect(exposed(rest401)).toContain('www-authenticate');

    const rest = await withAllowlist(
      allowlist,
      restGet('/v1/data/brands', { origin: INSPECTOR, authorization: `Bearer ${TEST_KEYS.org}` }),
    );
    expect(rest.status).toBe(200);
    expect(rest.headers.get('access-control-allow-origin')).toBe(INSPECTOR);
  });

  it('an origin not on the list is still refused on MCP', async () => {
    const res = await withAllowlist(
      allowlist,
      mcpPost({ origin: 'https://inspector.example.evil.test', authorization: `Bearer ${TEST_KEYS.org}` }),
    );
    expect(res.status).toBe(403);
    expect(ErrorBodySchema.parse(await res.json()).error.code).toBe('FORBIDDEN_ORIGIN');
  });

  it('a malformed ALLOWED_ORIGINS is reported (500 with a request id) for browser requests, not ignored', async () => {
    const res = await withAllowlist('inspector.example', mcpPost({ origin: ALLOWED, authorization: `Bearer ${TEST_KEYS.org}` }));
    expect(res.status).toBe(500);
    expect(ErrorBodySchema.parse(await res.json()).error.code).toBe('INTERNAL');
    // Server-to-server requests do not depend on it.
    expect((await withAllowlist('inspector.example', mcpPost({ authorization: `Bearer ${TEST_KEYS.org}` }))).status).toBe(200);
  });
});
