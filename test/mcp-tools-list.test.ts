import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectMcp, ERAS } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';

// A key offered every tool (save_memory needs the memory write permission; read-only keys are not offered it).
const key = TEST_KEYS.org;

beforeAll(async () => {
  await seedDemo();
  await env.DB.prepare(`UPDATE api_keys SET memories_write = 1 WHERE id = 'key_demo_org'`).run();
});

const JsonSchemaObject = z.looseObject({
  type: z.string().optional(),
  properties: z.record(z.string(), z.looseObject({ description: z.string().optional() })).optional(),
  required: z.array(z.string()).optional(),
  additionalProperties: z.boolean().optional(),
});
type JsonSchemaObject = z.infer<typeof JsonSchemaObject>;

// Tools whose results reach the model as the text block only (rows, or OpenAI's search/fetch text item).
const TEXT_RESULT_TOOLS = ['run_query', 'show_report', 'describe_table', 'get_report', 'search', 'fetch'];

describe('MCP tools/list', () => {
  it('offers the spec tools (plus get_report) with titles, model-facing descriptions and annotations', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    await client.close();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      'describe_table',
      'fetch',
      'get_data_issue',
      'get_report',
      'list_brands',
      'list_memories',
      'list_report_queries',
      'list_reports',
      'list_saved_queries',
      'report_data_issue',
      'run_query',
      'save_memory',
      'search',
      'show_report',
    ]);
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(60);
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(tool.name !== 'report_data_issue' && tool.name !== 'save_memory');
      // Tools whose results carry rows send them once, as text: no structuredContent, so no output schema.
      if (TEXT_RESULT_TOOLS.includes(tool.name)) expect(tool.outputSchema, tool.name).toBeUndefined();
      else expect(tool.outputSchema?.type, tool.name).toBe('object');
      // Strict inputs: an argument the schema does not name is refused, and the schema says so.
      expect(JsonSchemaObject.parse(tool.inputSchema).additionalProperties, tool.name).toBe(false);
    }
    expect(byName.get('report_data_issue')?.annotations).toMatchObject({ destructiveHint: false, idempotentHint: false });
    expect(byName.get('list_reports')?.annotations?.idempotentHint).toBe(true);
    // Read-only, but each run spends the daily budget.
    expect(byName.get('run_query')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: false });
  });

  it('tells the model the table naming rule, discovery queries, paging and the flows', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    const instructions = client.getInstructions() ?? '';
    await client.close();
    const text = (name: string) => tools.find((t) => t.name === name)?.description ?? '';
    expect(text('list_brands')).toMatch(/timezone.*queryable/s);
    expect(text('list_reports')).toMatch(/nextCursor/);
    expect(text('list_report_queries')).toMatch(/period/);
    expect(instructions).toMatch(/Flow A.*Flow B.*Flow C/s);
    // Discovery through describe_table (table metadata, no run), not the two counted discovery queries.
    expect(instructions).toContain('describe_table { brandId }');
    expect(instructions).not.toContain('INFORMATION_SCHEMA.COLUMNS');
    expect(instructions).not.toContain('table_metadata');
    expect(instructions).toMatch(/`cursor`/);
  });

  it('publishes input and output schemas that match the contract', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    await client.close();
    const schemaOf = (name: string, which: 'inputSchema' | 'outputSchema'): JsonSchemaObject => {
      const t = tools.find((x) => x.name === name);
      if (!t?.[which]) throw new Error(`${name} has no ${which}`);
      return JsonSchemaObject.parse(t[which]);
    };
    expect(Object.keys(schemaOf('list_reports', 'inputSchema').properties ?? {}).sort()).toEqual(['brandId', 'cursor', 'limit', 'type']);
    expect(schemaOf('list_reports', 'outputSchema').required?.sort()).toEqual(['hasMore', 'nextCursor', 'reports']);
    expect(schemaOf('list_report_queries', 'inputSchema').required).toEqual(['reportId']);
    expect(schemaOf('report_data_issue', 'inputSchema').required).toEqual(['summary']);
    expect(Object.keys(schemaOf('report_data_issue', 'inputSchema').properties ?? {}).sort()).toEqual([
      'brandId',
      'expected',
      'observed',
      'severity',
      'summary',
      'transcript',
    ]);
    expect(schemaOf('report_data_issue', 'outputSchema').required).toEqual(['feedbackRef']);
    expect(schemaOf('list_brands', 'outputSchema').required).toEqual(['brands']);
    expect(Object.keys(schemaOf('run_query', 'inputSchema').properties ?? {}).sort()).toEqual([
      'brandId',
      'cancel',
      'cursor',
      'dryRun',
      'maxRows',
      'period',
      'queryId',
      'sql',
    ]);
    expect(schemaOf('run_query', 'inputSchema').required).toBeUndefined();
    expect(Object.keys(schemaOf('describe_table', 'inputSchema').properties ?? {}).sort()).toEqual(['brandId', 'table']);
  });
});

describe('tools/list snapshot', () => {
  // What models read, committed: a change to a tool's name, description, annotations or schemas (or to the server
  // instructions) shows in review as a diff of this file. After a deliberate change:
  // npx vitest run <this file> --update (the flag after the file: vitest 4 reads `-u <file>` as an update mode).
  it('matches test/snapshots/tools-list.json', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    const instructions = client.getInstructions() ?? '';
    await client.close();
    await expect(`${JSON.stringify({ instructions, tools }, null, 2)}\n`).toMatchFileSnapshot('./snapshots/tools-list.json');
  });
});

describe("Claude's result limit", () => {
  it('run_query declares anthropic/maxResultSizeChars above its byte cap; tools that stay small declare nothing', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    await client.close();
    const cap = Number(env.MCP_MAX_RESULT_BYTES);
    const limit = z.object({ 'anthropic/maxResultSizeChars': z.number().int() }).parse(tools.find((t) => t.name === 'run_query')?._meta);
    expect(limit['anthropic/maxResultSizeChars']).toBeGreaterThan(cap);
    expect(limit['anthropic/maxResultSizeChars']).toBeLessThanOrEqual(500_000);
    expect(tools.find((t) => t.name === 'list_brands')?._meta).toBeUndefined();
  });
});

describe('what an assistant reads first', () => {
  const utf8 = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v)).length;
  const ISSUE_12_TOOLS = [
    'list_brands',
    'list_reports',
    'get_report',
    'list_report_queries',
    'list_saved_queries',
    'run_query',
    'report_data_issue',
  ];

  it.each(ERAS)('%s: instructions plus tools/list are at most 10 KB for the first seven tools, 15 KB for all', async (era) => {
    const client = await connectMcp(key, era);
    const { tools } = await client.listTools();
    const instructions = client.getInstructions() ?? '';
    await client.close();
    const first = tools.filter((t) => ISSUE_12_TOOLS.includes(t.name));
    expect(first).toHaveLength(ISSUE_12_TOOLS.length);
    expect(utf8(instructions) + utf8(first)).toBeLessThanOrEqual(10_000);
    // All fourteen tools (the query and report tools, search/fetch, the memories tools, show_report, describe_table,
    // get_data_issue) within 15 KB: get_data_issue (issue 37: the filer reads its report's status) added about 0.8 KB.
    expect(utf8(instructions) + utf8(tools)).toBeLessThanOrEqual(15_000);
  });

  it('states each rule once: the table naming and discovery rules live in the instructions only', async () => {
    const client = await connectMcp(key);
    const { tools } = await client.listTools();
    const instructions = client.getInstructions() ?? '';
    await client.close();
    const everything = [instructions, JSON.stringify(tools)].join('\n');
    for (const rule of ['service-v1.<dataset>.<table>', 'describe_table { brandId, table }', 'LIMIT n OFFSET m']) {
      expect(everything.split(rule).length - 1, rule).toBe(1);
      expect(instructions).toContain(rule);
    }
  });
});
