import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USER_IDS } from '../src/seed/demo-tenants';
import { oauthHelpers } from '../src/oauth/provider';
import {
  approveInBrowser,
  authorizeUrl,
  CALLBACK,
  codeRequest,
  connectAssistant,
  ErrorBodySchema,
  location,
  MCP_URL,
  OAuthErrorSchema,
  ORIGIN,
  rawToolsList,
  refreshRequest,
  startClient,
  TestBrowser,
  TokenResponseSchema,
} from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

/** A token answer (200) bound to the MCP endpoint, whose access token works there. */
async function expectMcpTokens(res: Response): Promise<void> {
  expect(res.status).toBe(200);
  const tokens = TokenResponseSchema.parse(await res.json());
  expect(tokens.resource).toBe(MCP_URL);
  expect((await rawToolsList(tokens.access_token)).status).toBe(200);
}

describe('tokens are bound to the MCP resource (RFC 8707)', () => {
  it('an authorization request for another resource is refused back at the client (invalid_target)', async () => {
    const { clientId, challenge } = await startClient();
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
    const { clientId, verifier, challenge } = await startClient();
    const { code } = await approveInBrowser(new TestBrowser('198.51.100.52'), TEST_ADMINS.org, clientId, challenge);
    const wrong = await codeRequest({ code, clientId, verifier, resource: 'https://other.example/mcp' });
    expect(wrong.status).toBe(400);
    expect(OAuthErrorSchema.parse(await wrong.json()).error).toBe('invalid_target');
    // Refused before the code was consumed: the right resource still gets a token, bound to the MCP endpoint.
    await expectMcpTokens(await codeRequest({ code, clientId, verifier, resource: MCP_URL }));
  });

  it('a client that sends no resource gets a token for the MCP endpoint, which works there', async () => {
    const { clientId, verifier, challenge } = await startClient();
    const browser = new TestBrowser('198.51.100.53');
    const first = await browser.get(authorizeUrl({ clientId, challenge, resource: null }));
    expect(first.status).toBe(200);
    const { code } = await approveInBrowser(browser, TEST_ADMINS.org, clientId, challenge);
    await expectMcpTokens(await codeRequest({ code, clientId, verifier, resource: null }));
  });

  it("a token issued for this origin's MCP endpoint is refused at another resource (401 invalid_token)", async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.54'));
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);
    const elsewhere = await rawToolsList(tokens.access_token, 'https://other-tenant.test/v1/data/mcp');
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
      const res = await refreshRequest(current.refresh_token, clientId);
      expect(res.status).toBe(200);
      current = TokenResponseSchema.parse(await res.json());
      expect((await rawToolsList(current.access_token)).status).toBe(200);
    }
  });

  it('presenting a rotated-out refresh token again: invalid_grant, and the whole grant is gone', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.brand, new TestBrowser('198.51.100.62'));
    const first = await refreshRequest(tokens.refresh_token, clientId);
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
    const legit = await refreshRequest(r2.refresh_token, clientId);
    expect(legit.status).toBe(400);
    expect(OAuthErrorSchema.parse(await legit.json()).error).toBe('invalid_grant');
    expect((await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand)).items).toHaveLength(0);
  });

  it('an older token (two rotations back) is reuse too', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.63'));
    const r2 = TokenResponseSchema.parse(await (await refreshRequest(tokens.refresh_token, clientId)).json());
    const r3 = TokenResponseSchema.parse(await (await refreshRequest(r2.refresh_token, clientId)).json());
    const reused = await refreshRequest(tokens.refresh_token, clientId);
    expect(reused.status).toBe(400);
    expect(OAuthErrorSchema.parse(await reused.json()).error).toBe('invalid_grant');
    expect((await rawToolsList(r3.access_token)).status).toBe(401);
    expect((await refreshRequest(r3.refresh_token, clientId)).status).toBe(400);
  });

  it('ten concurrent refreshes with one token: exactly one token pair, nine invalid_grant, and the grant is revoked', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.64'));
    const before = (await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.org)).items.length;
    const responses = await Promise.all(Array.from({ length: 10 }, () => refreshRequest(tokens.refresh_token, clientId)));
    const pairs = responses.filter((r) => r.status === 200);
    expect(pairs).toHaveLength(1);
    for (const r of responses.filter((res) => res.status !== 200)) {
      expect(r.status).toBe(400);
      expect(OAuthErrorSchema.parse(await r.json()).error).toBe('invalid_grant');
    }
    // Reuse revokes the grant, including the one pair issued: its write could not bring the grant back.
    const pair = TokenResponseSchema.parse(await pairs[0]?.json());
    expect((await rawToolsList(pair.access_token)).status).toBe(401);
    expect((await refreshRequest(pair.refresh_token, clientId)).status).toBe(400);
    expect((await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.org)).items).toHaveLength(before - 1);
  }, 60_000);
});
