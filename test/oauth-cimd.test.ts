import { SELF } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { clientIdHostProblem } from '../src/oauth/client-id-host';
import {
  approveInBrowser,
  authorizeUrl,
  codeRequest,
  ErrorBodySchema,
  MCP_URL,
  mcpClient,
  OAuthErrorSchema,
  ORIGIN,
  pkcePair,
  refreshRequest,
  serveOutbound,
  TestBrowser,
  tokenRequest,
  TokenResponseSchema,
  toolNamesOver,
  type OutboundAnswer,
} from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

let restoreOutbound: (() => void) | null = null;
afterEach(() => {
  restoreOutbound?.();
  restoreOutbound = null;
});

function serve(answers: Record<string, OutboundAnswer>): string[] {
  const outbound = serveOutbound(answers);
  restoreOutbound = outbound.restore;
  return outbound.calls;
}

/** Claude Code's published document (https://claude.ai/oauth/claude-code-client-metadata): port-less loopback redirects. */
const CLAUDE_CODE_ID = 'https://claude.ai/oauth/claude-code-client-metadata';
const claudeCodeDocument = {
  client_id: CLAUDE_CODE_ID,
  client_name: 'Claude Code',
  client_uri: 'https://claude.ai',
  redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

/** A document shaped like ChatGPT's: a public client redirecting to its connector platform. */
const CHATGPT_ID = 'https://chatgpt.com/oauth/connector-client-metadata.json';
const CHATGPT_CALLBACK = 'https://chatgpt.com/connector_platform_oauth_redirect';
const chatgptDocument = {
  client_id: CHATGPT_ID,
  client_name: 'ChatGPT',
  client_uri: 'https://chatgpt.com',
  redirect_uris: [CHATGPT_CALLBACK],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};

/** The whole flow for a metadata-document client: consent, code, token with only the URL as client_id. */
async function connectWithDocument(clientId: string, redirectUri: string, ip: string) {
  const { verifier, challenge } = await pkcePair();
  const { code, consentHtml } = await approveInBrowser(new TestBrowser(ip), TEST_ADMINS.org, clientId, challenge, redirectUri);
  const res = await codeRequest({ code, clientId, verifier, redirectUri });
  expect(res.status, await res.clone().text()).toBe(200);
  return { consentHtml, tokens: TokenResponseSchema.parse(await res.json()) };
}

/** GET /authorize for a client, as the browser the client opened; never follows redirects. */
async function openAuthorize(clientId: string, redirectUri: string, ip = '198.51.100.40'): Promise<Response> {
  const { challenge } = await pkcePair();
  return new TestBrowser(ip).get(authorizeUrl({ clientId, challenge, redirectUri }));
}

describe('Client ID Metadata Documents end to end', () => {
  it('Claude Code: port-less loopback redirects accept any port, PKCE S256, token, MCP, refresh', async () => {
    const calls = serve({ [CLAUDE_CODE_ID]: { body: claudeCodeDocument } });
    const redirectUri = 'http://localhost:53682/callback';
    const { consentHtml, tokens } = await connectWithDocument(CLAUDE_CODE_ID, redirectUri, '198.51.100.31');
    expect(consentHtml).toContain('Claude Code');
    expect(consentHtml).toContain('claude.ai');
    expect(tokens.resource).toBe(MCP_URL);
    expect(await toolNamesOver(tokens.access_token)).toContain('list_brands');
    // The document was fetched (and nothing else was asked for).
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set([CLAUDE_CODE_ID]));

    const refreshed = await refreshRequest(tokens.refresh_token, CLAUDE_CODE_ID);
    expect(refreshed.status).toBe(200);
    expect(await toolNamesOver(TokenResponseSchema.parse(await refreshed.json()).access_token)).toContain('list_brands');
  });

  it('Claude Code on 127.0.0.1 with another ephemeral port', async () => {
    serve({ [CLAUDE_CODE_ID]: { body: claudeCodeDocument } });
    const { tokens } = await connectWithDocument(CLAUDE_CODE_ID, 'http://127.0.0.1:61234/callback', '198.51.100.32');
    expect(await toolNamesOver(tokens.access_token)).toContain('list_brands');
  });

  it('ChatGPT: token_endpoint_auth_method none, redirect to the connector platform', async () => {
    serve({ [CHATGPT_ID]: { body: chatgptDocument } });
    const { consentHtml, tokens } = await connectWithDocument(CHATGPT_ID, CHATGPT_CALLBACK, '198.51.100.33');
    expect(consentHtml).toContain('chatgpt.com');
    const client = await mcpClient(tokens.access_token);
    const result = await client.callTool({ name: 'list_brands', arguments: {} });
    await client.close();
    expect(result.isError ?? false).toBe(false);
  });

  it('never redirects to a redirect_uri the document does not list', async () => {
    serve({ [CLAUDE_CODE_ID]: { body: claudeCodeDocument }, [CHATGPT_ID]: { body: chatgptDocument } });
    for (const [clientId, redirectUri] of [
      [CLAUDE_CODE_ID, 'http://localhost:8080/other-callback'],
      [CLAUDE_CODE_ID, 'https://attacker.example/callback'],
      [CLAUDE_CODE_ID, 'http://[::1]:8080/callback'],
      [CHATGPT_ID, 'https://chatgpt.com/connector_platform_oauth_redirect/evil'],
    ] as const) {
      const res = await openAuthorize(clientId, redirectUri);
      expect(res.status, redirectUri).toBe(400);
      expect(res.headers.get('location'), redirectUri).toBeNull();
    }
  });
});

describe('the metadata fetch is bounded', () => {
  const URL_ = 'https://tools.example/oauth/client.json';
  const doc = (extra: Record<string, unknown> = {}) => ({ ...claudeCodeDocument, client_id: URL_, client_name: 'Tool', ...extra });

  it('refuses a document over 5 KB (and takes one under it)', async () => {
    serve({ [URL_]: { body: doc({ software_statement_note: 'x'.repeat(6000) }) } });
    const big = await openAuthorize(URL_, 'http://localhost:5000/callback');
    expect(big.status).toBe(400);
    expect(await big.text()).toContain('could not be verified');
    restoreOutbound?.();

    serve({ [URL_]: { body: doc({ software_statement_note: 'x'.repeat(3000) }) } });
    const small = await openAuthorize(URL_, 'http://localhost:5000/callback', '198.51.100.41');
    expect(small.status).toBe(200);
  });

  it('gives up on a document that does not arrive within 10 seconds', async () => {
    serve({ [URL_]: { body: doc(), stallMs: 30_000 } });
    const started = Date.now();
    const res = await openAuthorize(URL_, 'http://localhost:5000/callback');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('could not be verified');
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 25_000);

  it('refuses a document whose client_id is not its own URL', async () => {
    serve({ [URL_]: { body: doc({ client_id: 'https://tools.example/oauth/another.json' }) } });
    const res = await openAuthorize(URL_, 'http://localhost:5000/callback');
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain('could not be verified');
  });

  it('does not fetch an http:// client_id (only https URLs are metadata documents)', async () => {
    const httpId = 'http://tools.example/oauth/client.json';
    const calls = serve({ [httpId]: { body: doc({ client_id: httpId }) } });
    const res = await openAuthorize(httpId, 'http://localhost:5000/callback');
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(calls).toEqual([]);
  });

  it('refuses private, loopback and local hosts before fetching anything, at /authorize and at the token endpoint', async () => {
    const hosts = [
      '10.0.0.8',
      '127.0.0.1',
      'localhost',
      '169.254.169.254',
      '192.168.1.20',
      '172.20.0.1',
      '[::1]',
      '[fd00::1]',
      '[::ffff:10.0.0.1]',
      'metadata.internal',
      '2130706433',
    ];
    const ids = hosts.map((h) => `https://${h}/oauth/client.json`);
    const calls = serve(Object.fromEntries(ids.map((id) => [id, { body: doc({ client_id: id }) }])));
    for (const id of ids) {
      const res = await openAuthorize(id, 'http://localhost:5000/callback');
      expect(res.status, id).toBe(400);
      const body = ErrorBodySchema.parse(await res.json());
      expect(body.error.code).toBe('VALIDATION');
      expect(body.error.message).toMatch(/not a public/);
      expect(res.headers.get('x-request-id')).toBe(body.error.requestId);

      const token = await tokenRequest({
        grant_type: 'authorization_code',
        code: 'x:y:z',
        redirect_uri: 'http://localhost:5000/callback',
        client_id: id,
        code_verifier: 'v'.repeat(43),
      });
      expect(token.status, id).toBe(401);
      expect(OAuthErrorSchema.parse(await token.json()).error).toBe('invalid_client');
    }
    expect(calls).toEqual([]);
  });

  it('classifies hosts: public names and addresses pass, reserved ranges do not', () => {
    for (const ok of [
      'https://claude.ai/x',
      'https://chatgpt.com/x',
      'https://8.8.8.8/x',
      'https://[2606:4700::1111]/x',
      'https://172.32.0.1/x',
      'not a url',
      'cursor://x',
    ]) {
      expect(clientIdHostProblem(ok), ok).toBeNull();
    }
    for (const bad of [
      'https://0.0.0.0/x',
      'https://100.64.1.1/x',
      'https://127.1/x',
      'https://0x7f000001/x',
      'https://[fe80::1]/x',
      'https://[::]/x',
      'https://host.local/x',
      'https://printer/x',
      'https://a.localhost/x',
      'https://198.18.0.1/x',
    ]) {
      expect(clientIdHostProblem(bad), bad).not.toBeNull();
    }
  });
});

describe('dynamic client registration stays (deprecated)', () => {
  it('still registers a client and advertises both CIMD and the registration endpoint', async () => {
    const meta = await SELF.fetch(`${ORIGIN}/.well-known/oauth-authorization-server`);
    const body = z
      .object({ registration_endpoint: z.string(), client_id_metadata_document_supported: z.boolean() })
      .parse(await meta.json());
    expect(body.client_id_metadata_document_supported).toBe(true);
    expect(body.registration_endpoint).toBe(`${ORIGIN}/oauth/register`);
  });
});
