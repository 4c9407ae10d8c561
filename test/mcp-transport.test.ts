import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateApiKey } from '../src/auth/api-keys';
import { ListBrandsOutput } from '../src/features/brands/brands.tools';
import { LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from '../src/mcp/protocol';
import { connectMcp, ERAS, MCP_URL, okData } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';
import { DEMO_BRAND_LISTING } from './demo-model';

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
    const data = okData(await client.callTool({ name: 'list_brands', arguments: {} }), ListBrandsOutput);
    expect(data).toEqual({
      brands: [DEMO_BRAND_LISTING.brand_acme, DEMO_BRAND_LISTING.brand_globex, DEMO_BRAND_LISTING.brand_initech],
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
    const res = await post(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_brands', arguments: {} } },
      {
        authorization: `Bearer ${TEST_KEYS.brand}`,
      },
    );
    expect(res.status).toBe(200);
    const body = await res.json<{ id: number; result: { structuredContent: unknown; isError?: boolean } }>();
    expect(body.id).toBe(3);
    expect(body.result.structuredContent).toEqual({
      brands: [DEMO_BRAND_LISTING.brand_acme],
    });
  });

  it('answers a notification-only POST with 202 and x-request-id', async () => {
    const res = await post(
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { authorization: `Bearer ${orgKey}`, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('a revoked key is refused at once', async () => {
    const key = await generateApiKey();
    await env.DB.prepare(
      'INSERT INTO api_keys (id, name, prefix, secret_hash, org_id, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, 0, 1)',
    )
      .bind(key.id, 'revoked', key.prefix, key.secretHash, 'org_demo')
      .run();
    const res = await post(initialize, { authorization: `Bearer ${key.secret}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

const MODERN = '2026-07-28';
const auth = { authorization: `Bearer ${orgKey}` };

/** A 2026-07-28 request: the `_meta` envelope in the body and the `Mcp-Method` / `Mcp-Name` headers. */
function modern(method: string, params: Record<string, unknown> = {}, name?: string, version = MODERN) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return post(
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } },
    { ...auth, 'mcp-protocol-version': version, 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) },
  );
}

const JsonRpcError = z.object({
  jsonrpc: z.literal('2.0'),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
});

describe.each(ERAS)('both protocol eras, one endpoint: %s', (era) => {
  it('a v2 SDK client lists the tools and calls list_brands with the same scoping', async () => {
    const client = await connectMcp(TEST_KEYS.brand, era);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('run_query');
    const data = okData(await client.callTool({ name: 'list_brands', arguments: {} }), ListBrandsOutput);
    expect(data.brands.map((b) => b.brandId)).toEqual(['brand_acme']);
    await client.close();
  });

  it('an unknown tool is JSON-RPC error -32602, not a tool result', async () => {
    const client = await connectMcp(orgKey, era);
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('an argument outside the input schema is refused, naming it (strict schemas, as REST refuses unknown properties)', async () => {
    const client = await connectMcp(orgKey, era);
    const result = await client.callTool({ name: 'list_reports', arguments: { brandid: 'brand_acme' } });
    expect(result.isError).toBe(true);
    const text = JSON.stringify(result.content);
    expect(text).toMatch(/Unrecognized key/);
    expect(text).toContain('brandid');
    await client.close();
  });
});

describe('2026-07-28 over raw HTTP', () => {
  it('server/discover: versions, instructions, no listChanged, cache hints', async () => {
    const res = await modern('server/discover');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await res.json<{ result: Record<string, unknown> }>();
    expect(body.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: { listChanged: false } },
      cacheScope: 'private',
    });
    expect(body.result.instructions).toEqual(expect.stringContaining('list_brands'));
    expect(body.result.ttlMs).toBeGreaterThan(0);
  });

  it('tools/list carries cache hints; the tool list is the same as the 2025 era but for 2025 task flags', async () => {
    const res = await modern('tools/list');
    const body = await res.json<{ result: { tools: { name: string }[]; ttlMs: number; cacheScope: string } }>();
    expect(body.result.ttlMs).toBeGreaterThan(0);
    expect(body.result.cacheScope).toBe('private');
    const legacy = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...auth, 'mcp-protocol-version': '2025-11-25' });
    const legacyBody = await legacy.json<{ result: { tools: { name: string; execution?: unknown }[] } }>();
    // `execution.taskSupport` is 2025-11-25 vocabulary (experimental tasks); 2026-07-28 removed it (docs/mcp.md).
    expect(legacyBody.result.tools.filter((t) => t.execution !== undefined).map((t) => t.name)).toEqual(['run_query']);
    expect(body.result.tools).toEqual(legacyBody.result.tools.map(({ execution: _flag, ...tool }) => tool));
  });

  it('an unsupported version is refused with -32022 listing the 2026-era versions (as server/discover does; 2025 ones are negotiated by initialize)', async () => {
    const res = await modern('tools/list', {}, undefined, '2027-01-01');
    expect(res.status).toBe(400);
    const body = JsonRpcError.parse(await res.json());
    expect(body.error.code).toBe(-32022);
    expect(body.error.data).toEqual({ requested: '2027-01-01', supported: [...MODERN_PROTOCOL_VERSIONS] });
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
  });

  it('Mcp-Method must agree with the body (-32020), and Mcp-Name with the tool called', async () => {
    const res = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
      { ...auth, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' },
    );
    expect(res.status).toBe(400);
    expect(JsonRpcError.parse(await res.json()).error.code).toBe(-32020);
    const call = await modern('tools/call', { name: 'list_brands', arguments: {} }, 'run_query');
    expect(call.status).toBe(400);
  });

  it("logs the SDK's refusal of a 2026-07-28 request with that request's id, also when refusals interleave", async () => {
    const lines: unknown[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(line));
    try {
      const responses = await Promise.all(
        Array.from({ length: 4 }, () => modern('tools/call', { name: 'list_brands', arguments: {} }, 'run_query')),
      );
      const refused = lines
        .map((l) => (typeof l === 'string' ? (JSON.parse(l) as { msg?: string; requestId?: string; internal?: string }) : {}))
        .filter((l) => l.msg === 'mcp request refused');
      expect(responses.map((r) => r.status)).toEqual([400, 400, 400, 400]);
      expect(refused.map((l) => l.requestId).sort()).toEqual(responses.map((r) => r.headers.get('x-request-id')).sort());
      expect(refused.every((l) => /Mcp-Name|mcp-name/i.test(l.internal ?? ''))).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a JSON-RPC batch', async () => {
    const res = await post(
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } }],
      {
        ...auth,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
      },
    );
    expect(res.status).toBe(400);
    expect(JsonRpcError.parse(await res.json()).error.code).toBe(-32600);
  });
});

describe('2025 era over raw HTTP', () => {
  it.each(LEGACY_PROTOCOL_VERSIONS)('initialize %s: that version back, no listChanged advertised', async (version) => {
    const res = await post({ ...initialize, params: { ...initialize.params, protocolVersion: version } }, auth);
    const body = await res.json<{ result: { protocolVersion: string; capabilities: { tools: { listChanged?: boolean } } } }>();
    expect(body.result.protocolVersion).toBe(version);
    expect(body.result.capabilities.tools.listChanged).toBe(false);
  });

  it('an unsupported MCP-Protocol-Version header is refused with the supported versions listed', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...auth, 'mcp-protocol-version': '2024-01-01' });
    expect(res.status).toBe(400);
    const body = JsonRpcError.parse(await res.json());
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) expect(body.error.message).toContain(v);
  });

  it.each(['2025-11-25', '2025-06-18'])('refuses a JSON-RPC batch under %s (batches were removed in 2025-06-18)', async (version) => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ];
    const res = await post(batch, { ...auth, 'mcp-protocol-version': version });
    expect(res.status).toBe(400);
    const body = JsonRpcError.parse(await res.json());
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toContain(version);
  });

  it('still answers a batch under 2025-03-26, which allowed them', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    ];
    const res = await post(batch, { ...auth, 'mcp-protocol-version': '2025-03-26' });
    expect(res.status).toBe(200);
    const body = await res.json<{ id: number }[]>();
    expect(body.map((m) => m.id).sort()).toEqual([1, 2]);
  });

  it('a v1 SDK client (@modelcontextprotocol/sdk 1.x, 2025-11-25) still connects and calls tools', async () => {
    const client = new ClientV1({ name: 'v1-client', version: '1.0.0' });
    await client.connect(
      new TransportV1(new URL(MCP_URL), { fetch: (url, init) => SELF.fetch(url, init), requestInit: { headers: auth } }),
    );
    const data = okData(await client.callTool({ name: 'list_brands', arguments: {} }), ListBrandsOutput);
    expect(data.brands).toHaveLength(3);
    await client.close();
  });
});
