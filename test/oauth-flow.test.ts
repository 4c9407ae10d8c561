import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_USER_IDS } from '../src/seed/demo-tenants';
import { oauthHelpers } from '../src/oauth/provider';
import {
  approveInBrowser,
  authorizeUrl,
  brandIdsOver,
  CALLBACK,
  codeRequest,
  connectAssistant,
  ErrorBodySchema,
  inputValue,
  location,
  MCP_URL,
  OAuthErrorSchema,
  ORIGIN,
  rawToolsList,
  refreshRequest,
  registerClient,
  signIn,
  startClient,
  TestBrowser,
  tokenRequest,
  TokenResponseSchema,
  toolNamesOver,
} from './oauth-client';
import { seedDemo, TEST_ADMINS, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

describe('discovery metadata', () => {
  it('publishes RFC 9728 protected-resource metadata for /v1/data/mcp', async () => {
    const res = await SELF.fetch(`${ORIGIN}/.well-known/oauth-protected-resource/v1/data/mcp`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = z
      .object({
        resource: z.string(),
        authorization_servers: z.array(z.string()),
        scopes_supported: z.array(z.string()),
        bearer_methods_supported: z.array(z.string()),
      })
      .parse(await res.json());
    expect(body).toMatchObject({
      resource: MCP_URL,
      authorization_servers: [ORIGIN],
      scopes_supported: ['data:read'],
      bearer_methods_supported: ['header'],
    });
  });

  it('publishes RFC 8414 authorization-server metadata: S256 only, DCR, CIMD, refresh, revocation', async () => {
    const res = await SELF.fetch(`${ORIGIN}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const body = z
      .object({
        issuer: z.string(),
        authorization_endpoint: z.string(),
        token_endpoint: z.string(),
        registration_endpoint: z.string(),
        revocation_endpoint: z.string(),
        code_challenge_methods_supported: z.array(z.string()),
        grant_types_supported: z.array(z.string()),
        response_types_supported: z.array(z.string()),
        client_id_metadata_document_supported: z.boolean(),
      })
      .parse(await res.json());
    expect(body).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      client_id_metadata_document_supported: true,
    });
    expect(body.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
  });

  it('answers an unauthenticated MCP call with 401 in our error shape and the discovery challenge', async () => {
    const res = await rawToolsList(null);
    expect(res.status).toBe(401);
    const { error } = ErrorBodySchema.parse(await res.json());
    expect(error.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('x-request-id')).toBe(error.requestId);
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/v1/data/mcp"`);
  });

  it('refuses a bad bearer token with 401 invalid_token', async () => {
    for (const token of ['not-a-token', 'wqk_notARealKey000000000000000000000000000000', 'a:b:c']) {
      const res = await rawToolsList(token);
      expect(res.status, token).toBe(401);
      expect(ErrorBodySchema.parse(await res.json()).error.code).toBe('UNAUTHORIZED');
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });
});

describe('the whole flow with a scripted client', () => {
  it('register, sign in, consent, code + PKCE, token, tools over MCP, refresh, revoke, then 401', async () => {
    const { clientId, verifier, challenge } = await startClient('Scripted Assistant');
    const browser = new TestBrowser();

    // 1. Not signed in: the sign-in form names the client.
    const url = authorizeUrl({ clientId, challenge, state: 'st-1' });
    const signInPage = await browser.get(url);
    expect(signInPage.status).toBe(200);
    const signInHtml = await signInPage.text();
    expect(signInHtml).toContain('Scripted Assistant');
    expect(signInHtml).toContain('name="password"');

    // 2. Sign in with the administrator's login.
    const signedIn = await browser.post(url, {
      intent: 'signin',
      csrf: inputValue(signInHtml, 'csrf'),
      email: TEST_ADMINS.org.email,
      password: TEST_ADMINS.org.password,
    });
    expect(signedIn.status).toBe(303);
    expect(location(signedIn).search).toBe(new URL(url, ORIGIN).search);

    // 3. Consent: client name, redirect host, brands, read-only.
    const consentRes = await browser.get(url);
    expect(consentRes.status).toBe(200);
    expect(consentRes.headers.get('x-frame-options')).toBe('DENY');
    expect(consentRes.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const consent = await consentRes.text();
    expect(consent).toContain('Scripted Assistant');
    expect(consent).toContain('assistant.example');
    expect(consent).toMatch(/It cannot change any warehouse data/);
    for (const name of ['Acme Outdoor', 'Globex Coffee', 'Initech Labs']) expect(consent).toContain(name);
    expect(consent).not.toContain('Umbrella Health');

    // 4. Allow: back to the client with a code, the state and the issuer.
    const allowed = await browser.post('/authorize', {
      intent: 'consent',
      csrf: inputValue(consent, 'csrf'),
      handle: inputValue(consent, 'handle'),
      decision: 'allow',
    });
    expect(allowed.status).toBe(302);
    const back = location(allowed);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(ORIGIN);
    const code = back.searchParams.get('code') ?? '';

    // 5. A wrong verifier is refused (PKCE), the right one gets tokens.
    const wrong = await codeRequest({ code, clientId, verifier: 'x'.repeat(43) });
    expect(wrong.status).toBe(400);
    expect(OAuthErrorSchema.parse(await wrong.json()).error).toBe('invalid_grant');
    // (A failed verifier attempt burns nothing the client could reuse: start again with a fresh code.)
    const second = await approveInBrowser(browser, TEST_ADMINS.org, clientId, challenge);
    const tokenRes = await codeRequest({ code: second.code, clientId, verifier });
    expect(tokenRes.status).toBe(200);
    const tokens = TokenResponseSchema.parse(await tokenRes.json());
    expect(tokens.scope).toBe('data:read');
    expect(tokens.token_type.toLowerCase()).toBe('bearer');

    // 6. MCP tools/list (the same tools an API key gets) and a tool call acting as the org administrator.
    const oauthTools = (await toolNamesOver(tokens.access_token)).sort();
    expect(oauthTools).toEqual(expect.arrayContaining(['list_brands', 'list_reports', 'report_data_issue']));
    // The same tools as the org key, plus save_memory: tools are listed per principal, and an administrator's
    // connection may write memories where a read-only key may not.
    expect(oauthTools).toEqual([...(await toolNamesOver(TEST_KEYS.org)), 'save_memory'].sort());
    expect(await brandIdsOver(tokens.access_token)).toEqual(['brand_acme', 'brand_globex', 'brand_initech']);

    // 7. Refresh rotates the tokens; the new access token works.
    const refreshed = await refreshRequest(tokens.refresh_token, clientId);
    expect(refreshed.status).toBe(200);
    const next = TokenResponseSchema.parse(await refreshed.json());
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(await brandIdsOver(next.access_token)).toHaveLength(3);

    // 8. Revoking the refresh token revokes the grant: access and refresh both stop.
    const revoked = await tokenRequest({ token: next.refresh_token, token_type_hint: 'refresh_token', client_id: clientId });
    expect(revoked.status).toBe(200);
    const after = await rawToolsList(next.access_token);
    expect(after.status).toBe(401);
    expect(ErrorBodySchema.parse(await after.json()).error.code).toBe('UNAUTHORIZED');
    const refreshAgain = await refreshRequest(next.refresh_token, clientId);
    expect(refreshAgain.status).toBe(400);
  });

  it('Deny sends the browser back with error=access_denied and the state', async () => {
    const { clientId, challenge } = await startClient();
    const browser = new TestBrowser();
    const url = authorizeUrl({ clientId, challenge, state: 'deny-me' });
    expect((await signIn(browser, url, TEST_ADMINS.brand)).status).toBe(303);
    const consent = await (await browser.get(url)).text();
    const denied = await browser.post('/authorize', {
      intent: 'consent',
      csrf: inputValue(consent, 'csrf'),
      handle: inputValue(consent, 'handle'),
      decision: 'deny',
    });
    expect(denied.status).toBe(302);
    const back = location(denied);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('deny-me');
    expect(back.searchParams.get('code')).toBeNull();
    // No connection was made.
    const grants = await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.brand);
    expect(grants.items).toHaveLength(0);
  });

  it('a consent handle works once', async () => {
    const { clientId, challenge } = await startClient();
    const browser = new TestBrowser();
    const { consentHtml } = await approveInBrowser(browser, TEST_ADMINS.org, clientId, challenge);
    const replay = await browser.post('/authorize', {
      intent: 'consent',
      csrf: inputValue(consentHtml, 'csrf'),
      handle: inputValue(consentHtml, 'handle'),
      decision: 'allow',
    });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('This approval page expired');
  });

  it('refuses PKCE plain and a missing challenge, back at the client', async () => {
    const clientId = await registerClient();
    const browser = new TestBrowser();
    const plain = await browser.get(authorizeUrl({ clientId, challenge: 'a'.repeat(43), method: 'plain' }));
    expect(plain.status).toBe(302);
    expect(location(plain).searchParams.get('error')).toBe('invalid_request');
    const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, state: 's' });
    const none = await browser.get(`/authorize?${q}`);
    expect(none.status).toBe(302);
    expect(location(none).searchParams.get('error')).toBe('invalid_request');
  });

  it('never redirects to an unregistered redirect URI', async () => {
    const { clientId, challenge } = await startClient();
    const res = await new TestBrowser().get(authorizeUrl({ clientId, challenge, redirectUri: 'https://evil.example/cb' }));
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('Invalid redirect URI');
  });

  it('scopes a brand administrator to their brand', async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.brand);
    expect(await brandIdsOver(tokens.access_token)).toEqual(['brand_acme']);
  });
});

describe('API keys on the same endpoint', () => {
  it('accepts an API key through the provider, with the same tools and scoping', async () => {
    expect(await toolNamesOver(TEST_KEYS.brand)).toContain('list_brands');
    expect(await brandIdsOver(TEST_KEYS.brand)).toEqual(['brand_acme']);
    expect(await brandIdsOver(TEST_KEYS.other)).toEqual(['brand_umbrella']);
  });

  it('refuses a revoked key at once', async () => {
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE org_id = 'org_other'").bind(Date.now()).run();
    const res = await rawToolsList(TEST_KEYS.other);
    expect(res.status).toBe(401);
  });
});
