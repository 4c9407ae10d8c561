import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/auth/api-keys';
import { connectMcp, MCP_URL, okData } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';

const orgKey = TEST_KEYS.org;

beforeAll(async () => {
  await seedDemo();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

function post(body: unknown, headers: Record<string, string> = {}) {
  return SELF.fetch(MCP_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

describe('MCP endpoint transport', () => {
  it('lists brands through the SDK client', async () => {
    const client = await connectMcp(orgKey);
    const data = okData(await client.callTool({ name: 'list_brands', arguments: {} }));
    expect(data).toEqual({
      brands: [
        { brandId: 'brand_acme', name: 'Acme Outdoor', dataset: 'acme' },
        { brandId: 'brand_globex', name: 'Globex Coffee', dataset: 'globex' },
        { brandId: 'brand_initech', name: 'Initech Labs', dataset: null },
      ],
    });
    await client.close();
  });

  it.each([
    ['no Authorization header', {}, false],
    ['an unknown key', { authorization: 'Bearer wqk_not-a-real-key' }, true],
  ])('401 with %s: error body, request id, OAuth discovery challenge', async (_name, headers, sentToken) => {
    const res = await post(initialize, headers);
    expect(res.status).toBe(401);
    const body = await res.json<{ error: { code: string; requestId: string } }>();
    expect(body.error.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
    const challenge = res.headers.get('www-authenticate');
    // Points MCP clients at the protected-resource metadata (RFC 9728), where OAuth discovery starts.
    expect(challenge).toMatch(/^Bearer .*resource_metadata="https?:\/\/mcp\.test\/\.well-known\/oauth-protected-resource[^"]*"/);
    expect(challenge?.includes('error="invalid_token"')).toBe(sentToken);
  });

  it.each(['GET', 'DELETE', 'PUT'])('%s answers 405 with Allow: POST, our error body and x-request-id', async (method) => {
    const res = await SELF.fetch(MCP_URL, {
      method,
      headers: { authorization: `Bearer ${orgKey}`, accept: 'text/event-stream', 'mcp-session-id': 'whatever' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const body = await res.json<{ error: { code: string; message: string; requestId: string } }>();
    expect(body.error.code).toBe('METHOD_NOT_ALLOWED');
    expect(body.error.message).toMatch(/POST/);
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
  });

  it('answers initialize statelessly: JSON, no session id, server instructions, x-request-id', async () => {
    const res = await post(initialize, { authorization: `Bearer ${orgKey}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    const body = await res.json<{ result: { serverInfo: { name: string }; instructions: string; capabilities: { tools?: object } } }>();
    expect(body.result.serverInfo.name).toBe('warehouse-query-api');
    expect(body.result.capabilities.tools).toBeDefined();
    expect(body.result.instructions).toContain('service-v1.<dataset>.<table>');
    expect(body.result.instructions).toContain('list_brands');
  });

  it('keeps protocol errors as JSON-RPC errors (unknown method, malformed JSON) with x-request-id', async () => {
    const auth = { authorization: `Bearer ${orgKey}`, 'mcp-protocol-version': '2025-06-18' };
    const unknown = await post({ jsonrpc: '2.0', id: 7, method: 'no/such/method' }, auth);
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await unknown.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } });

    const malformed = await SELF.fetch(MCP_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth },
      body: '{"jsonrpc":',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('answers a lone tools/call without a prior initialize (stateless: one POST is a whole exchange)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_brands', arguments: {} } }, {
      authorization: `Bearer ${TEST_KEYS.brand}`,
    });
    expect(res.status).toBe(200);
    const body = await res.json<{ id: number; result: { structuredContent: unknown; isError?: boolean } }>();
    expect(body.id).toBe(3);
    expect(body.result.structuredContent).toEqual({ brands: [{ brandId: 'brand_acme', name: 'Acme Outdoor', dataset: 'acme' }] });
  });

  it('answers a notification-only POST with 202 and x-request-id', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { authorization: `Bearer ${orgKey}`, 'mcp-protocol-version': '2025-06-18' });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('a revoked key is refused at once', async () => {
    const key = await generateApiKey();
    await env.DB.prepare('INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, 0, 1)')
      .bind(key.id, 'revoked', key.prefix, key.secretHash, 'org_demo')
      .run();
    const res = await post(initialize, { authorization: `Bearer ${key.secret}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
