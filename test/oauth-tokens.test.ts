import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_USER_IDS } from '../src/seed/demo-catalog';
import { oauthHelpers } from '../src/oauth/provider';
import {
  approveInBrowser,
  authorizeUrl,
  CALLBACK,
  connectAssistant,
  location,
  MCP_URL,
  ORIGIN,
  pkcePair,
  rawToolsList,
  registerClient,
  TestBrowser,
  tokenRequest,
  TokenResponseSchema,
} from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

const OAuthErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });
const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string(), requestId: z.string() }) });

function refresh(refreshToken: string, clientId: string): Promise<Response> {
  return tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
}

/** tools/list at another origin's MCP endpoint (same Worker, same KV: a different resource identifier). */
function toolsListAt(mcpUrl: string, token: string): Promise<Response> {
  return SELF.fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

describe('tokens are bound to the MCP resource (RFC 8707)', () => {
  it('an authorization request for another resource is refused back at the client (invalid_target)', async () => {
    const clientId = await registerClient();
    const { challenge } = await pkcePair();
    const browser = new TestBrowser('198.51.100.51');
    for (const resource of ['https://other.example/mcp', `${ORIGIN}/v1/data/other`, `${ORIGIN}/v1/data/mcp-other`]) {
      const res = await browser.get(authorizeUrl({ clientId, challenge, resource }));
      expect(res.status, resource).toBe(302);
      const back = location(res);
      expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
      expect(back.searchParams.get('error'), resource).toBe('invalid_target');
      expect(back.searchParams.get('code')).toBeNull();
    }
  });

  it('a code cannot be exchanged for another resource; the right one (or none) works', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const { code } = await approveInBrowser(new TestBrowser('198.51.100.52'), TEST_ADMINS.org, clientId, challenge);
    const base = { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: clientId, code_verifier: verifier };
    const wrong = await tokenRequest({ ...base, resource: 'https://other.example/mcp' });
    expect(wrong.status).toBe(400);
    expect(OAuthErrorSchema.parse(await wrong.json()).error).toBe('invalid_target');
    // Refused before the code was consumed: the right resource still gets a token, bound to the MCP endpoint.
    const right = await tokenRequest({ ...base, resource: MCP_URL });
    expect(right.status).toBe(200);
    const tokens = TokenResponseSchema.parse(await right.json());
    expect(tokens.resource).toBe(MCP_URL);
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);
  });

  it('a client that sends no resource gets a token for the MCP endpoint, which works there', async () => {
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const browser = new TestBrowser('198.51.100.53');
    const first = await browser.get(authorizeUrl({ clientId, challenge, resource: null }));
    expect(first.status).toBe(200);
    const { code } = await approveInBrowser(browser, TEST_ADMINS.org, clientId, challenge);
    const res = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: clientId, code_verifier: verifier });
    expect(res.status).toBe(200);
    const tokens = TokenResponseSchema.parse(await res.json());
    expect(tokens.resource).toBe(MCP_URL);
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);
  });

  it('a token issued for this origin\'s MCP endpoint is refused at another resource (401 invalid_token)', async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.54'));
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);
    const elsewhere = await toolsListAt('https://other-tenant.test/v1/data/mcp', tokens.access_token);
    expect(elsewhere.status).toBe(401);
    const challenge = elsewhere.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="OAuth"/);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain('resource_metadata="https://other-tenant.test/.well-known/oauth-protected-resource/v1/data/mcp"');
    const body = ErrorBodySchema.parse(await elsewhere.json());
    expect(body.error.code).toBe('UNAUTHORIZED');
  });
});

describe('refresh-token reuse revokes the grant', () => {
  it('rotation keeps working while each refresh token is used once', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.61'));
    let current = tokens;
    for (let i = 0; i < 3; i++) {
      const res = await refresh(current.refresh_token, clientId);
      expect(res.status).toBe(200);
      current = TokenResponseSchema.parse(await res.json());
      expect((await rawToolsList(current.access_token)).status).toBe(200);
    }
  });

  it('presenting a rotated-out refresh token again: invalid_grant, and the whole grant is gone', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.brand, new TestBrowser('198.51.100.62'));
    const first = await refresh(tokens.refresh_token, clientId);
    expect(first.status).toBe(200);
    const r2 = TokenResponseSchema.parse(await first.json());
    expect((await rawToolsList(r2.access_token)).status).toBe(200);
    expect((await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand)).items).toHaveLength(1);

    const reused = await SELF.fetch(`${ORIGIN}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://browser-client.example' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId }).toString(),
    });
    expect(reused.status).toBe(400);
    expect(reused.headers.get('access-control-allow-origin')).toBe('https://browser-client.example');
    const err = OAuthErrorSchema.parse(await reused.json());
    expect(err.error).toBe('invalid_grant');
    expect(err.error_description).toMatch(/already used/);
    expect(reused.headers.get('cache-control')).toBe('no-store');
    expect(reused.headers.get('x-request-id')).toMatch(/^req_/);

    // Everything the grant issued stops working: both access tokens, and the legitimate client's new refresh token.
    expect((await rawToolsList(r2.access_token)).status).toBe(401);
    expect((await rawToolsList(tokens.access_token)).status).toBe(401);
    const legit = await refresh(r2.refresh_token, clientId);
    expect(legit.status).toBe(400);
    expect(OAuthErrorSchema.parse(await legit.json()).error).toBe('invalid_grant');
    expect((await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand)).items).toHaveLength(0);
  });

  it('an older token (two rotations back) is reuse too', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.63'));
    const r2 = TokenResponseSchema.parse(await (await refresh(tokens.refresh_token, clientId)).json());
    const r3 = TokenResponseSchema.parse(await (await refresh(r2.refresh_token, clientId)).json());
    const reused = await refresh(tokens.refresh_token, clientId);
    expect(reused.status).toBe(400);
    expect(OAuthErrorSchema.parse(await reused.json()).error).toBe('invalid_grant');
    expect((await rawToolsList(r3.access_token)).status).toBe(401);
    expect((await refresh(r3.refresh_token, clientId)).status).toBe(400);
  });
});
