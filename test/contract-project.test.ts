import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CONTRACT_PROJECT } from '../src/sql/guard';
import { expectError, postJson, seedDemo } from './seed';

// Callers write `service-v1.<dataset>.<table>`; the local warehouse, like a real deployment, hosts the datasets
// under another project (BIGQUERY_PROJECT). The service maps one to the other at the table references going in,
// and back in everything coming out.

const WH = env.BIGQUERY_API_BASE;
const REAL = env.BIGQUERY_PROJECT;
const Body = z.object({ query: z.string().optional(), configuration: z.object({ query: z.object({ query: z.string() }) }).optional() });
const Journal = z.object({ requests: z.array(z.object({ op: z.string(), body: Body.nullable() })) });
const Run = z.object({ rows: z.array(z.record(z.string(), z.unknown())) });
const Err = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) });

beforeAll(async () => {
  await seedDemo();
});

async function sentSql(marker: string) {
  const res = await fetch(`${WH}/__requests?${new URLSearchParams({ sql: marker, limit: '50' })}`);
  return Journal.parse(await res.json()).requests.map((r) => r.body?.query ?? r.body?.configuration?.query.query);
}

describe('the service-v1 prefix on any project', () => {
  it('the tests run against a project that is not service-v1', () => {
    expect(REAL).not.toBe(CONTRACT_PROJECT);
    expect(REAL).toMatch(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/);
  });

  it('maps the references going in, and leaves literals and comments as written', async () => {
    const marker = `m${crypto.randomUUID().replace(/-/g, '')}`;
    const sql =
      `-- service-v1.acme.fact__orders ${marker}\n` +
      "SELECT 'service-v1.acme.fact__orders' AS literal, COUNT(*) AS n FROM `service-v1.acme.fact__orders` AS `service-v1`";
    const res = await postJson('/v1/data/query', 'brand', { sql });
    expect(res.status).toBe(200);
    expect(Run.parse(res.body).rows).toEqual([{ literal: 'service-v1.acme.fact__orders', n: expect.any(Number) as unknown }]);
    const sent = await sentSql(marker);
    expect(sent.length).toBeGreaterThanOrEqual(2); // the dry run and the run
    for (const s of sent) {
      expect(s).toBe(
        `-- service-v1.acme.fact__orders ${marker}\n` +
          `SELECT 'service-v1.acme.fact__orders' AS literal, COUNT(*) AS n FROM \`${REAL}.acme.fact__orders\` AS \`service-v1\``,
      );
    }
  });

  it("maps only the catalog columns, at any depth: a brand's own value equal to the project id is its data (N8)", async () => {
    const own = await postJson('/v1/data/query', 'brand', { sql: `SELECT '${REAL}' AS project_id, ['${REAL}'] AS projects` });
    expect(own.status).toBe(200);
    expect(Run.parse(own.body).rows).toEqual([{ project_id: REAL, projects: [REAL] }]);

    const nested = await postJson('/v1/data/query', 'brand', {
      sql:
        'SELECT ARRAY_AGG(STRUCT(table_catalog, table_name)) AS t, STRUCT(MIN(table_catalog) AS table_catalog) AS s ' +
        "FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'fact__orders' AND column_name = 'order_id'",
    });
    expect(nested.status).toBe(200);
    expect(Run.parse(nested.body).rows).toEqual([
      { t: [{ table_catalog: 'service-v1', table_name: 'fact__orders' }], s: { table_catalog: 'service-v1' } },
    ]);
  });

  it('what comes back names service-v1: INFORMATION_SCHEMA rows and warehouse errors', async () => {
    const columns = await postJson('/v1/data/query', 'brand', {
      sql: "SELECT DISTINCT table_catalog FROM `service-v1.acme.INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'fact__orders'",
    });
    expect(columns.status).toBe(200);
    expect(Run.parse(columns.body).rows).toEqual([{ table_catalog: 'service-v1' }]);

    const missing = await postJson('/v1/data/query', 'brand', { sql: 'SELECT * FROM `service-v1.acme.no_such_table`' });
    expectError(missing, 400, 'QUERY_FAILED');
    const text = JSON.stringify(Err.parse(missing.body));
    expect(text).toContain('service-v1.acme.no_such_table');
    expect(text).not.toContain(REAL);
  });

  it('the real project cannot be named directly, and other datasets stay out of reach', async () => {
    const direct = await postJson('/v1/data/query', 'brand', { sql: `SELECT 1 FROM \`${REAL}.acme.fact__orders\`` });
    expectError(direct, 403, 'FORBIDDEN_TABLE');
    expect(JSON.stringify(direct.body)).toContain('only project service-v1 can be queried');
    const other = await postJson('/v1/data/query', 'brand', { sql: 'SELECT 1 FROM `service-v1.globex.fact__orders`' });
    expectError(other, 403, 'FORBIDDEN_TABLE');
    expect(JSON.stringify(other.body)).not.toContain(REAL);
  });
});
