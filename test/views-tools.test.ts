// The tools that link the MCP Apps views, through the Worker inside workerd with the real MCP client:
// run_query and show_report name their view in `_meta.ui.resourceUri`; show_report runs a whole report for one
// period (each section exactly what run_query { queryId, period } returns, the window used, a failing section
// carrying its error while the others still show); run_query's results are what they were without a UI.
import { env } from 'cloudflare:test';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ShowReportOutput } from '../src/features/reports/report-view.tools';
import { QueryListSchema, ReportDetailSchema } from '../src/schemas/catalog';
import { VIEWS } from '../src/mcp/views';
import { connectMcp, errorOf, okData, textData, texts } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';
import { warehouseFaults } from './warehouse-faults';

let client: Client;
const { arm } = warehouseFaults();

beforeAll(async () => {
  await seedDemo();
  client = await connectMcp(TEST_KEYS.brand);
});

afterAll(async () => {
  await client.close();
});

const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
/** run_query's data: its one text block (compact JSON, rows as arrays) with rows back as objects. */
const structured = textData;
const RowsOf = z.object({ rows: z.array(z.record(z.string(), z.unknown())), totalRows: z.number(), window: z.unknown().optional() });

describe('tools that link the views', () => {
  it('run_query links the result view and show_report the report view, in both _meta spellings', async () => {
    const { tools } = await client.listTools();
    const meta = (name: string) => tools.find((t) => t.name === name)?._meta;
    expect(meta('run_query')).toMatchObject({ ui: { resourceUri: VIEWS.result.uri }, 'ui/resourceUri': VIEWS.result.uri });
    expect(meta('show_report')).toMatchObject({ ui: { resourceUri: VIEWS.report.uri }, 'ui/resourceUri': VIEWS.report.uri });
    // The other tools have no view.
    for (const t of tools.filter((x) => !['run_query', 'show_report'].includes(x.name))) expect(t._meta?.ui, t.name).toBeUndefined();
    const show = tools.find((t) => t.name === 'show_report');
    expect(show?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: false, openWorldHint: false });
    expect(show?.inputSchema.required).toEqual(['reportId']);
  });

  it('run_query results carry no view data: the one text block a host without apps reads is what the view reads', async () => {
    const raw = await call('run_query', {
      sql: 'SELECT channel, COUNT(*) AS orders FROM `service-v1.acme.fact__orders` GROUP BY channel ORDER BY channel',
    });
    const data = structured(raw);
    // Only the protocol's own envelope beside the result: nothing for a view.
    expect(
      Object.keys(raw)
        .filter((k) => k !== '_meta')
        .sort(),
    ).toEqual(['content']);
    expect(JSON.stringify(raw._meta ?? {})).not.toMatch(/"ui"|ui\/resourceUri/);
    expect(RowsOf.parse(data).rows.map((r) => r.channel)).toEqual(['marketplace', 'store', 'web']);
  });

  it('show_report: the Business Overview for one period, each section as run_query returns it, and the window', async () => {
    const period = { cadence: 'MONTHLY' };
    const raw = await call('show_report', { reportId: 'rpt_business_overview', period });
    const shown = ShowReportOutput.parse(textData(raw));
    // The layout and charts are the view's: in _meta, not in the text the model reads.
    const text = texts(raw)[0] ?? '';
    expect(text).not.toContain('dashboardConfig');
    expect(text).not.toContain('chartSpec');
    expect(text).not.toMatch(/"rows":\[\{/);
    const report = ReportDetailSchema.parse(textData(await call('get_report', { reportId: 'rpt_business_overview' })));
    const { queries } = okData(await call('list_report_queries', { reportId: 'rpt_business_overview' }), QueryListSchema);
    expect(shown.brandId).toBe('brand_acme');
    expect(shown.report).toEqual(report);
    expect(shown.sections.map((s) => s.id)).toEqual(queries.map((q) => q.id));
    expect(shown.sections.map((s) => s.chartSpec)).toEqual(queries.map((q) => q.chartSpec));
    for (const section of shown.sections) {
      expect(section.error, section.id).toBeUndefined();
      const alone = RowsOf.parse(structured(await call('run_query', { queryId: section.id, period })));
      expect(section.rows, section.id).toEqual(alone.rows);
      expect(section.totalRows, section.id).toBe(alone.totalRows);
      expect(shown.window).toEqual(alone.window);
    }
    expect(shown.window).toMatchObject({ cadence: 'MONTHLY', timezone: expect.any(String) });
    expect(shown.window?.startDate).toMatch(/^\d{4}-\d{2}-01$/);
  });

  it('a section that fails carries its error and request id; the other sections still show', async () => {
    const period = { startDate: '2026-02-03', endDate: '2026-02-26' };
    await arm({
      // A job that failed in the warehouse: never resent (a 5xx on submit now succeeds through the client-id
      // jobs.insert fallback, so it no longer makes a section fail).
      kind: 'jobInternalError',
      persistent: true,
      match: { sql: "agg__daily_revenue`\nWHERE day BETWEEN DATE '2026-02-03'" },
    });

    const shown = ShowReportOutput.parse(textData(await call('show_report', { reportId: 'rpt_business_overview', period })));
    const daily = shown.sections.find((s) => s.id === 'rq_overview_daily');
    expect(daily?.rows).toBeUndefined();
    expect(daily?.error).toMatchObject({ code: 'WAREHOUSE_ERROR', requestId: expect.stringMatching(/^req_/) });
    const others = shown.sections.filter((s) => s.id !== 'rq_overview_daily');
    expect(others).toHaveLength(3);
    for (const s of others) expect(s.error, s.id).toBeUndefined();
    expect(shown.window).toMatchObject(period);
  });

  it('show_report refuses what run_query and get_report refuse, with their codes', async () => {
    expect(errorOf(await call('show_report', { reportId: 'rpt_nope' })).code).toBe('REPORT_NOT_FOUND');
    const other = await connectMcp(TEST_KEYS.other);
    expect(errorOf(await other.callTool({ name: 'show_report', arguments: { reportId: 'rpt_acme_trading' } })).code).toBe(
      'REPORT_NOT_FOUND',
    );
    await other.close();
    const bad = await call('show_report', { reportId: 'rpt_business_overview', period: { startDate: '2026-02-03' } });
    expect(bad.isError).toBe(true);
  });
});
