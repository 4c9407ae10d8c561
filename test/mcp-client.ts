import { SELF } from 'cloudflare:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect } from 'vitest';
import { z } from 'zod';
import { seedDemo, type TestKey } from './seed';

export const MCP_URL = 'http://mcp.test/v1/data/mcp';

/** The two protocol eras the endpoint serves: 2026-07-28 (no `initialize`) and the 2025 `initialize` handshake. */
export const ERAS = ['modern', 'legacy'] as const;
export type Era = (typeof ERAS)[number];

/**
 * The SDK's own (v2) client over Streamable HTTP, its requests going through the Worker's fetch (SELF), so every
 * call exercises auth, the transport and the tools exactly as a remote client would. `modern` pins 2026-07-28
 * (per-request `_meta` envelope, `Mcp-Method` headers, no handshake); `legacy` opens with `initialize`.
 */
export async function connectMcp(key: string, era: Era = 'modern'): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client(
    { name: 'mcp-test-client', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  await client.connect(transport);
  return client;
}

const ToolResult = z.object({
  isError: z.boolean().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
});

/** The text blocks of a tool result, in order. */
export function texts(raw: unknown): string[] {
  return ToolResult.parse(raw).content.flatMap((c) => (c.type === 'text' && c.text !== undefined ? [c.text] : []));
}

function firstText(raw: unknown): string {
  const first = texts(raw)[0];
  if (first === undefined) throw new Error(`tool result has no text content: ${JSON.stringify(raw)}`);
  return first;
}

/** Whether `text` is a JSON copy of `data` (what a structured result's text must never be: ChatGPT reads both). */
export function isJsonCopy(text: string, data: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(data);
  } catch {
    return false;
  }
}

/**
 * Asserts a successful tool result whose text is a compact rendering of its structuredContent, not a second copy
 * of it (every answer once: ChatGPT reads both), and returns the data parsed with
 * the tool's own output schema (as the REST tests parse bodies with the route's schema): a field the schema does
 * not declare, or one of the wrong type, fails the test here.
 */
export function okData<S extends z.ZodType>(raw: unknown, schema: S): z.output<S>;
export function okData(raw: unknown): Record<string, unknown>;
export function okData(raw: unknown, schema?: z.ZodType): unknown {
  const result = ToolResult.parse(raw);
  expect(result.isError ?? false, firstText(raw)).toBe(false);
  const data = result.structuredContent;
  if (data === undefined) throw new Error('successful tool result without structuredContent');
  expect(isJsonCopy(firstText(raw), data), 'the text block repeats structuredContent').toBe(false);
  if (schema === undefined) return data;
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new Error(`structuredContent does not match the tool's output schema: ${parsed.error.message}`);
  return parsed.data;
}

const ErrorBody = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string(), requestId: z.string().regex(/^req_/), details: z.unknown().optional() }),
});

/** Asserts a tool error result carrying the REST error body and returns its `error` object. */
export function errorOf(raw: unknown) {
  const result = ToolResult.parse(raw);
  expect(result.isError, firstText(raw)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return ErrorBody.parse(JSON.parse(firstText(raw))).error;
}

/**
 * One connected client per demo key for a test file (org, brand, other): connected before its tests, closed
 * after them. Returns the record the tests call through.
 */
export function mcpClientsPerKey(keys: Record<TestKey, string>, era: Era = 'modern'): Record<TestKey, Client> {
  const clients = {} as Record<TestKey, Client>;
  beforeAll(async () => {
    await seedDemo();
    for (const k of ['org', 'brand', 'other'] as const) clients[k] = await connectMcp(keys[k], era);
  });
  afterAll(async () => {
    await Promise.all(Object.values(clients).map((c) => c.close()));
  });
  return clients;
}

const Rec = z.record(z.string(), z.unknown());

/** Rows sent as arrays in `schema` order, back as objects keyed by column name. */
function expandRows(node: Record<string, unknown>): Record<string, unknown> {
  const { rows, schema } = node;
  if (!Array.isArray(rows) || !Array.isArray(schema)) return node;
  const names = z
    .array(z.object({ name: z.string() }))
    .parse(schema)
    .map((f) => f.name);
  return {
    ...node,
    rows: z
      .array(z.array(z.unknown()))
      .parse(rows)
      .map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]]))),
  };
}

/**
 * A successful text-only result (run_query, show_report, search, fetch): no structuredContent, exactly one text
 * block holding the compact JSON, rows as arrays under `schema`. Returns that JSON with rows expanded back to objects and, for
 * show_report, the layout and chart specs from `_meta` put back where the REST shapes have them.
 */
export function textData(raw: unknown): Record<string, unknown> {
  const result = ToolResult.extend({ _meta: Rec.optional() }).parse(raw);
  expect(result.isError ?? false, firstText(raw)).toBe(false);
  expect(result.structuredContent).toBeUndefined();
  expect(texts(raw)).toHaveLength(1);
  const data = expandRows(Rec.parse(JSON.parse(firstText(raw))));
  const view = result._meta?.['warehouse/report-view'];
  if (view === undefined) return data;
  const { dashboardConfig, chartSpecs } = z.object({ dashboardConfig: z.unknown(), chartSpecs: Rec }).parse(view);
  const sections = z
    .array(Rec)
    .parse(data.sections)
    .map((s) => {
      const section = expandRows(s);
      const chart = typeof section.id === 'string' ? chartSpecs[section.id] : undefined;
      return chart === undefined ? section : { ...section, chartSpec: chart };
    });
  return { ...data, report: { ...Rec.parse(data.report), dashboardConfig }, sections };
}
