// Security round 4 (issue 33): a forged refresh token cannot disconnect anyone. The token string names a user and a
// grant (ids other administrators see in history links); only a token the OAuth library has verified may count as
// used, so a made-up one is invalid_grant and changes nothing, however many arrive at once and with any client_id.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_USER_IDS } from '../src/seed/demo-tenants';
import { oauthHelpers } from '../src/oauth/provider';
import {
  connectAssistant,
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

async function grantIds(): Promise<string[]> {
  return (await oauthHelpers(env, ORIGIN).listUserGrants(DEMO_USER_IDS.org)).items.map((g) => g.id);
}

describe('a forged refresh token cannot disconnect anyone', () => {
  it('four concurrent forged refreshes of a real grant, any client_id: all refused, the connection keeps working', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.71'));
    const [userId, grantId] = tokens.refresh_token.split(':');
    expect(await grantIds()).toContain(grantId);
    const other = (await startClient('Attacker')).clientId;
    const forged = `${userId}:${grantId}:madeUp`;
    const clients = [clientId, other, clientId, 'any-client'];
    const answers = await Promise.all(clients.map((client) => refreshRequest(forged, client)));
    for (const [i, res] of answers.entries()) {
      const { error } = OAuthErrorSchema.parse(await res.json());
      // Whichever request reaches the grant's gate first goes on to the library; the others are refused at the gate
      // while it runs, or by the library after it (400 invalid_grant either way). The library answers an unregistered
      // client 401 invalid_client before it reads the token, so 'any-client' may differ whenever it reaches the library.
      if (clients[i] === 'any-client' && res.status === 401) expect(error).toBe('invalid_client');
      else expect([res.status, error]).toEqual([400, 'invalid_grant']);
    }
    // And again, one after another: a token the library refused was never recorded, so it is not "reuse" either.
    for (const client of [clientId, other]) expect((await refreshRequest(forged, client)).status).toBe(400);
    const unregistered = await refreshRequest(forged, 'any-client');
    expect([unregistered.status, OAuthErrorSchema.parse(await unregistered.json()).error]).toEqual([401, 'invalid_client']);

    // Nothing changed: the grant exists, its access token works, and its real refresh token still rotates.
    expect(await grantIds()).toContain(grantId);
    expect((await rawToolsList(tokens.access_token)).status).toBe(200);
    const rotated = await refreshRequest(tokens.refresh_token, clientId);
    expect(rotated.status).toBe(200);
    const next = TokenResponseSchema.parse(await rotated.json());
    expect((await rawToolsList(next.access_token)).status).toBe(200);
  }, 60_000);

  it('a real token presented again after its exchange is still reuse: the grant is revoked', async () => {
    const { tokens, clientId } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.72'));
    const grantId = tokens.refresh_token.split(':')[1];
    expect((await refreshRequest(tokens.refresh_token, clientId)).status).toBe(200);
    const again = await refreshRequest(tokens.refresh_token, clientId);
    expect(again.status).toBe(400);
    expect(OAuthErrorSchema.parse(await again.json()).error_description).toContain('already used once');
    expect(await grantIds()).not.toContain(grantId);
  }, 60_000);
});
