// brandId only when it is needed (issue 39): credentials that reach exactly one brand (org_other's organization key
// reaches only Umbrella) run and describe without brandId; credentials that reach several are told where the brands
// are listed, over MCP by the tool's name; a data-issue report without brandId stays organization-wide.
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { FeedbackResponseSchema } from '../src/features/feedback/feedback.schemas';
import { RunQueryResponseSchema } from '../src/features/query/run-query.schemas';
import { errorOf, mcpClientsPerKey, textData } from './mcp-client';
import { expectError, postJson, TEST_KEYS } from './seed';

const clients = mcpClientsPerKey(TEST_KEYS);

describe('one reachable brand: inferred', () => {
  it('REST: an organization key with one brand runs raw SQL without brandId, against that brand', async () => {
    const res = await postJson('/v1/data/query', 'other', { sql: 'SELECT COUNT(*) AS n FROM `service-v1.umbrella.fact__orders`' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(RunQueryResponseSchema.parse(res.body).brandId).toBe('brand_umbrella');
  });

  it('MCP: run_query, describe_table (list and one table) and a shared report section without brandId', async () => {
    const run = textData(await clients.other.callTool({ name: 'run_query', arguments: { sql: 'SELECT 1 AS one' } }));
    expect(run.brandId).toBe('brand_umbrella');
    const list = textData(await clients.other.callTool({ name: 'describe_table', arguments: {} }));
    expect(list.brandId).toBe('brand_umbrella');
    const table = textData(await clients.other.callTool({ name: 'describe_table', arguments: { table: 'fact__orders' } }));
    expect(table).toMatchObject({ brandId: 'brand_umbrella', table: 'fact__orders' });
    // rq_overview_kpis belongs to a system report (every brand's): one reachable brand decides it.
    const section = textData(await clients.other.callTool({ name: 'run_query', arguments: { queryId: 'rq_overview_kpis', dryRun: true } }));
    expect(section.brandId).toBe('brand_umbrella');
  });

  it('a data-issue report without brandId stays organization-wide', async () => {
    const res = await postJson('/v1/data/feedback', 'other', { summary: 'inference check: organization-wide' });
    expect(res.status).toBe(200);
    const { feedbackRef } = FeedbackResponseSchema.parse(res.body);
    const row = await env.DB.prepare('SELECT org_id, brand_id FROM feedback WHERE id = ?').bind(feedbackRef).first();
    expect(row).toEqual({ org_id: 'org_other', brand_id: null });
  });
});

describe('several reachable brands: brandId required, and the refusal says where they are listed', () => {
  it('REST names GET /v1/data/brands', async () => {
    const error = expectError(await postJson('/v1/data/query', 'org', { sql: 'SELECT 1 AS one' }), 400, 'VALIDATION');
    expect(error.message).toBe('brandId is required: these credentials reach 3 brands (GET /v1/data/brands lists them)');
  });

  it('MCP names the list_brands tool, not the REST path', async () => {
    for (const [name, args] of [
      ['run_query', { sql: 'SELECT 1 AS one' }],
      ['describe_table', {}],
    ] as const) {
      const error = errorOf(await clients.org.callTool({ name, arguments: args }));
      expect(error, name).toMatchObject({
        code: 'VALIDATION',
        message: 'brandId is required: these credentials reach 3 brands (the list_brands tool lists them)',
      });
      expect(error.message).not.toContain('/v1/data');
    }
  });
});
