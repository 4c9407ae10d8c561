import { env } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { fillTemplate } from '../src/catalog/template';
import { reportDatasets } from '../src/features/catalog-files/check';
import { DEMO_BRANDS } from '../src/seed/demo-tenants';
import { DEMO_CATALOG } from './demo-catalog';
import { contractReferences } from '../src/features/query/contract-project';
import { checkDryRun, checkSql, CONTRACT_PROJECT, withProject } from '../src/sql/guard';
import { createWarehouseClient } from '../src/warehouse/bigquery-client';

/**
 * Every SQL statement the demo catalog ships (each report section, filled for each brand it applies to, and each
 * saved query) passes the SQL guard, BigQuery's dry-run verdict and runs on the local warehouse with rows to show,
 * through the Worker's own BigQuery client. So the demo works end to end, not just in the catalog.
 */

const PROJECT = CONTRACT_PROJECT;
const today = inject('warehouseToday');

/** The last full month before the warehouse's "today" (the default window of a stored-query run). */
function lastFullMonth(iso: string) {
  const [y, m] = iso.split('-').map(Number);
  const start = new Date(Date.UTC(y ?? 0, (m ?? 1) - 2, 1));
  const end = new Date(Date.UTC(y ?? 0, (m ?? 1) - 1, 0));
  return { start_date: start.toISOString().slice(0, 10), end_date: end.toISOString().slice(0, 10) };
}

const cases = [
  ...DEMO_CATALOG.reports.flatMap((r) =>
    r.sections.flatMap((s) =>
      reportDatasets(r, DEMO_BRANDS).map(({ dataset }) => ({
        id: s.id,
        dataset,
        sql: fillTemplate(s.sql, { dataset, ...lastFullMonth(today) }),
      })),
    ),
  ),
  ...DEMO_CATALOG.savedQueries.map((q) => ({
    id: q.id,
    dataset: DEMO_BRANDS.find((b) => b.id === q.brandId)?.dataset ?? '',
    sql: q.sql,
  })),
];

describe('demo catalog SQL on the local warehouse', () => {
  it('covers every section for every brand it applies to, and every saved query', () => {
    // 4 system sections x 3 provisioned brands + 4 org_demo x 2 + 3 acme + 1 globex + 1 org_other + 1 umbrella + 7 saved.
    expect(cases).toHaveLength(12 + 8 + 3 + 1 + 1 + 1 + 7);
  });

  it.each(cases.map((c) => [`${c.id} on ${c.dataset}`, c] as const))('%s', async (_name, c) => {
    const scope = { project: PROJECT, dataset: c.dataset };
    const guard = await checkSql(c.sql, scope);
    expect(guard).toMatchObject({ ok: true });
    if (!guard.ok) return;
    for (const t of guard.tables) expect(t.startsWith(`${PROJECT}.${c.dataset}.`), t).toBe(true);

    const client = createWarehouseClient(env);
    const opts = { brandId: `demo_${c.dataset}`, requestId: `req_template_${c.id}`, labels: { test: 'catalog' } };
    // As run_query sends it: the contract's project mapped to the warehouse's at the references the guard found.
    const sent = withProject(c.sql, guard.projectAt, PROJECT, env.BIGQUERY_PROJECT);
    const dry = await client.dryRun(sent, opts);
    expect(checkDryRun(contractReferences(dry, env.BIGQUERY_PROJECT), scope, guard.tables)).toEqual({ ok: true });

    const result = await client.query(sent, { ...opts, maxBytesBilled: 10 * 1024 ** 3, rowCap: 1000, timeoutMs: 20_000 });
    expect(result.rows.length, c.sql).toBeGreaterThan(0);
    expect(result.truncated).toBe(false);
  });
});
