import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../src/lib/ids';
import { lockedUntilAfterFailure, FAILURES_BEFORE_LOCK, FIRST_LOCK_MS, IP_FAILURE_LIMIT, MAX_LOCK_MS } from '../src/web/sign-in';
import { oauthHelpers } from '../src/oauth/provider';
import { DEMO_USER_IDS } from '../src/seed/demo-tenants';
import {
  addUser,
  authorizeUrl,
  brandIdsOver,
  connectAssistant,
  ErrorBodySchema,
  inputValue,
  mcpClient,
  OAuthErrorSchema,
  ORIGIN,
  rawToolsList,
  refreshRequest,
  signIn,
  signInCsrf,
  startClient,
  TestBrowser,
} from './oauth-client';
import { seedDemo, TEST_ADMINS, WAIT_UNTIL_WORK } from './seed';

beforeAll(async () => {
  await seedDemo();
  await addUser('user_viewer', 'viewer@demo.test', 'viewer-password-1');
});

describe('only administrators can connect', () => {
  it('refuses a signed-in user who administers nothing, with a clear page and no consent form', async () => {
    const { clientId, challenge } = await startClient();
    const browser = new TestBrowser('203.0.113.10');
    const url = authorizeUrl({ clientId, challenge });
    const signedIn = await signIn(browser, url, { email: 'viewer@demo.test', password: 'viewer-password-1' });
    expect(signedIn.status).toBe(303);
    const refused = await browser.get(url);
    expect(refused.status).toBe(403);
    const html = await refused.text();
    expect(html).toContain('Only administrators can connect assistants');
    expect(html).toContain('viewer@demo.test');
    expect(html).not.toContain('name="handle"');
    // Posting a consent anyway gets nowhere.
    const forced = await browser.post('/authorize', { intent: 'consent', csrf: inputValue(html, 'csrf'), handle: 'x', decision: 'allow' });
    expect(forced.status).toBe(403);
    expect(forced.headers.get('location')).toBeNull();
  });
});

describe('losing admin rights cuts access at once', () => {
  it('a deleted membership makes the next MCP call 401, revokes the grant, and refresh fails', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.brand, new TestBrowser('203.0.113.11'));
    const client = await mcpClient(tokens.access_token);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();

    await env.DB.prepare('DELETE FROM memberships WHERE user_id = ?').bind(DEMO_USER_IDS.brand).run();

    const res = await rawToolsList(tokens.access_token);
    expect(res.status).toBe(401);
    const { error } = ErrorBodySchema.parse(await res.json());
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).toMatch(/no longer an administrator/);
    expect(res.headers.get('x-request-id')).toBe(error.requestId);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // The grant is gone (revocation runs in waitUntil; poll briefly), so refreshing cannot bring it back.
    const helpers = oauthHelpers(env, ORIGIN);
    await vi.waitFor(async () => expect((await helpers.listUserGrants(DEMO_USER_IDS.brand)).items).toHaveLength(0), WAIT_UNTIL_WORK);
    const refresh = await refreshRequest(tokens.refresh_token, clientId);
    expect(refresh.status).toBe(400);

    // Restoring the membership does not revive the old connection: it must be approved again.
    await env.DB.prepare("INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES (?, 'brand_acme', 'admin', ?)")
      .bind(DEMO_USER_IDS.brand, Date.now())
      .run();
    expect((await rawToolsList(tokens.access_token)).status).toBe(401);
  });

  it('a refresh after losing rights is refused even before any MCP call', async () => {
    await addUser('user_temp_admin', 'temp-admin@demo.test', 'temp-admin-password-1');
    await env.DB.prepare("INSERT INTO memberships (user_id, org_id, role, created_at) VALUES ('user_temp_admin', 'org_other', 'admin', ?)")
      .bind(Date.now())
      .run();
    const { tokens, clientId } = await connectAssistant(
      { email: 'temp-admin@demo.test', password: 'temp-admin-password-1' },
      new TestBrowser('203.0.113.12'),
    );
    await env.DB.prepare("DELETE FROM memberships WHERE user_id = 'user_temp_admin'").run();
    const refresh = await refreshRequest(tokens.refresh_token, clientId);
    expect(refresh.status).toBe(400);
    expect(OAuthErrorSchema.parse(await refresh.json()).error).toBe('invalid_grant');
    expect((await oauthHelpers(env, ORIGIN).listUserGrants('user_temp_admin')).items).toHaveLength(0);
  });

  it('a membership change takes effect on the next request (brands recomputed)', async () => {
    await addUser('user_growing', 'growing@demo.test', 'growing-password-1');
    await env.DB.prepare(
      "INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES ('user_growing', 'brand_globex', 'admin', ?)",
    )
      .bind(Date.now())
      .run();
    const { tokens } = await connectAssistant(
      { email: 'growing@demo.test', password: 'growing-password-1' },
      new TestBrowser('203.0.113.13'),
    );
    expect(await brandIdsOver(tokens.access_token)).toEqual(['brand_globex']);
    await env.DB.prepare(
      "INSERT INTO memberships (user_id, brand_id, role, created_at) VALUES ('user_growing', 'brand_initech', 'admin', ?)",
    )
      .bind(Date.now())
      .run();
    expect(await brandIdsOver(tokens.access_token)).toEqual(['brand_globex', 'brand_initech']);
  });
});

describe('CSRF on the authorization pages', () => {
  it('refuses a consent post with a wrong token, without consuming the handle', async () => {
    const { clientId, challenge } = await startClient();
    const browser = new TestBrowser('203.0.113.14');
    const url = authorizeUrl({ clientId, challenge });
    expect((await signIn(browser, url, TEST_ADMINS.org)).status).toBe(303);
    const consent = await (await browser.get(url)).text();
    const handle = inputValue(consent, 'handle');
    const forged = await browser.post('/authorize', { intent: 'consent', csrf: 'f'.repeat(64), handle, decision: 'allow' });
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    const crossSite = await browser.post(
      '/authorize',
      { intent: 'consent', csrf: inputValue(consent, 'csrf'), handle, decision: 'allow' },
      'https://evil.example',
    );
    expect(crossSite.status).toBe(403);
    // The real form still works afterwards.
    const ok = await browser.post('/authorize', { intent: 'consent', csrf: inputValue(consent, 'csrf'), handle, decision: 'allow' });
    expect(ok.status).toBe(302);
  });

  it('refuses a sign-in post without the login nonce cookie (login CSRF)', async () => {
    const { clientId, challenge } = await startClient();
    const url = authorizeUrl({ clientId, challenge });
    const csrf = await signInCsrf(new TestBrowser(), url);
    const stranger = new TestBrowser('203.0.113.15');
    const res = await stranger.post(url, { intent: 'signin', csrf, email: TEST_ADMINS.org.email, password: TEST_ADMINS.org.password });
    expect(res.status).toBe(403);
    expect(stranger.cookies.has('__Host-wq-session')).toBe(false);
  });
});

describe('sign-in throttling', () => {
  it('locks an account after 5 failures, refuses even the right password while locked, and unlocks after', async () => {
    const browser = new TestBrowser('203.0.113.20');
    const { clientId, challenge } = await startClient();
    const url = authorizeUrl({ clientId, challenge });
    const csrf = await signInCsrf(browser, url);
    const attempt = (password: string) => browser.post(url, { intent: 'signin', csrf, email: TEST_ADMINS.org.email, password });

    for (let i = 1; i < FAILURES_BEFORE_LOCK; i++) expect((await attempt('wrong-password')).status).toBe(401);
    const locking = await attempt('wrong-password');
    expect(locking.status).toBe(429);
    expect(await locking.text()).toContain('Too many failed sign-ins for this account');
    const refused = await attempt(TEST_ADMINS.org.password);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    expect(browser.cookies.has('__Host-wq-session')).toBe(false);
    const lockRow = async () =>
      env.DB.prepare('SELECT failures, locked_until FROM login_account_failures WHERE user_id = ? AND source_hash = ?')
        .bind(DEMO_USER_IDS.org, await sha256Hex('203.0.113.20'))
        .first<{ failures: number; locked_until: number }>();
    expect((await lockRow())?.failures).toBe(FAILURES_BEFORE_LOCK);

    // When the lock has passed, the right password works and resets the count.
    await env.DB.prepare('UPDATE login_account_failures SET locked_until = ? WHERE user_id = ?')
      .bind(Date.now() - 1, DEMO_USER_IDS.org)
      .run();
    const ok = await attempt(TEST_ADMINS.org.password);
    expect(ok.status).toBe(303);
    expect(await lockRow()).toBeNull();
  });

  it('doubles the lock with each further failure, up to a day', () => {
    const now = 1_000_000;
    expect(lockedUntilAfterFailure(FAILURES_BEFORE_LOCK - 1, now)).toBeNull();
    expect(lockedUntilAfterFailure(FAILURES_BEFORE_LOCK, now)).toBe(now + FIRST_LOCK_MS);
    expect(lockedUntilAfterFailure(FAILURES_BEFORE_LOCK + 1, now)).toBe(now + 2 * FIRST_LOCK_MS);
    expect(lockedUntilAfterFailure(FAILURES_BEFORE_LOCK + 40, now)).toBe(now + MAX_LOCK_MS);
  });

  it('throttles one IP address across accounts (password spraying)', async () => {
    const browser = new TestBrowser('203.0.113.99');
    const csrf = await signInCsrf(browser, '/admin/login');
    for (let i = 0; i < IP_FAILURE_LIMIT; i++) {
      const res = await browser.post('/admin/login', { csrf, email: `nobody-${i}@demo.test`, password: 'guess' });
      expect(res.status).toBe(401);
    }
    const blocked = await browser.post('/admin/login', { csrf, email: TEST_ADMINS.brand.email, password: TEST_ADMINS.brand.password });
    expect(blocked.status).toBe(429);
    expect(await blocked.text()).toContain('Too many failed sign-ins from your network');
    // Another address is unaffected.
    const other = new TestBrowser('203.0.113.98');
    const ok = await other.post('/admin/login', {
      csrf: await signInCsrf(other, '/admin/login'),
      email: TEST_ADMINS.brand.email,
      password: TEST_ADMINS.brand.password,
    });
    expect(ok.status).toBe(303);
  }, 60_000);
});
