import { z } from 'zod';
import { errorBody, toApiError } from '../../errors';
import { getReport, listReportQueries } from './reports';
import { runQuery } from '../query/run-query';
import { QuerySchema, ReportDetailSchema } from '../../schemas/catalog';
import { BrandIdField, ReportIdField } from '../../schemas/fields';
import { PeriodSchema, ResolvedWindowSchema, RunQueryResponseSchema } from '../query/run-query.schemas';
import { RESULT_ENVELOPE_CHARS } from '../query/query.tools';
import { resultCaps, rowArray, rowsThatFit } from '../query/result-text';
import { resultSizeMeta } from '../../mcp/tool-result';
import { ANNOTATIONS, defineTool, toolReply } from '../../mcp/define-tool';
import { viewMeta, VIEWS } from '../../mcp/views';

/** A section as show_report returns it: what list_report_queries says about it, then its rows, or why it has none. */
const ShownSection = QuerySchema.pick({ id: true, name: true, description: true, chartSpec: true, narrativeHints: true }).extend(
  RunQueryResponseSchema.pick({ rows: true, rowCount: true, truncated: true, schema: true, totalRows: true, nextCursor: true })
    .partial()
    .extend({
      error: z
        .object({ code: z.string(), message: z.string(), requestId: z.string() })
        .optional()
        .describe('Set when this section could not run (the others still did): the error run_query would have returned.'),
    }).shape,
);

export const ShowReportOutput = z.object({
  brandId: z.string().describe('The brand the sections ran against.'),
  report: ReportDetailSchema,
  window: ResolvedWindowSchema.optional().describe('The date window the parameterized sections ran with.'),
  sections: z
    .array(ShownSection)
    .describe("Every section in the report's order with its rows, capped like run_query (page one with run_query { cursor })."),
});
export type ShowReportOutput = z.infer<typeof ShowReportOutput>;
type ShownSection = z.infer<typeof ShownSection>;

/** The `_meta` key of what only the report view needs: the dashboard layout and each section's chart. */
export const REPORT_VIEW_META = 'warehouse/report-view';

/**
 * The model's copy of a dashboard, sent once as the text block: the report's words (name, description,
 * instructions), the window, and each section's rows as arrays under its schema (as run_query's result). The
 * layout and chart specs are for the view only, so they travel in the result's `_meta` instead.
 */
function compactReport(data: ShowReportOutput) {
  const { dashboardConfig: _layout, ...report } = data.report;
  return {
    brandId: data.brandId,
    report,
    ...(data.window ? { window: data.window } : {}),
    sections: data.sections.map(({ chartSpec: _chart, rows, schema, ...section }) => {
      if (rows === undefined) return section;
      const columns = (schema ?? []).map((f) => f.name);
      return { ...section, schema, rows: rows.map((r) => rowArray(columns.length > 0 ? columns : Object.keys(r), r)) };
    }),
  };
}

function viewOnly(data: ShowReportOutput): Record<string, unknown> {
  const charts = Object.fromEntries(
    data.sections.flatMap((s) => (s.chartSpec === undefined || s.chartSpec === null ? [] : [[s.id, s.chartSpec]])),
  );
  return { [REPORT_VIEW_META]: { dashboardConfig: data.report.dashboardConfig, chartSpecs: charts } };
}

/**
 * show_report: a whole report for one period in one call, for the report view (hosts without MCP Apps get the
 * same data as JSON). Each section is one run_query of its stored query, so it is checked, metered, audited and
 * capped exactly as run_query would; a section that fails carries its error and the others still show.
 */
export const showReportTool = defineTool({
  name: 'show_report',
  title: 'Show report',
  description:
    'Run every section of a report for one period and show it as a dashboard (MCP Apps hosts draw it; others ' +
    'get the data). One usage run per section; for one section, or to page one, use run_query.',
  input: {
    reportId: ReportIdField.describe('From list_reports.'),
    brandId: BrandIdField.optional().describe('As list_reports gave it.'),
    period: PeriodSchema.optional().describe("As run_query's period; omitted: the last full month."),
  },
  output: ShowReportOutput,
  // The sections' rows reach the model once, as compact JSON text; the layout goes to the view in _meta.
  result: 'text',
  // Read-only, but not idempotent: each section spends a run of the daily budget.
  annotations: ANNOTATIONS.meteredRead,
  // The sections share MCP_MAX_RESULT_BYTES, so the JSON text is about that size, like a capped run_query.
  meta: ({ ctx }) => ({ ...resultSizeMeta(ctx.config.MCP_MAX_RESULT_BYTES + RESULT_ENVELOPE_CHARS), ...viewMeta(VIEWS.report) }),
  run: async ({ reportId, brandId, period }, { ctx }) => {
    const caps = resultCaps(ctx.config.MCP_ROW_CAP, ctx.config.MCP_MAX_RESULT_BYTES);
    const report = await getReport(ctx, { reportId, brandId });
    const { queries } = await listReportQueries(ctx, { reportId, brandId: report.brandId });
    // The sections share one result's byte budget, so the whole dashboard stays within MCP_MAX_RESULT_BYTES.
    const share = resultCaps(caps.rows, Math.floor(caps.bytes / Math.max(1, queries.length)));
    const opts = { rowCap: caps.rows, fitRows: (rows: Record<string, unknown>[]) => rowsThatFit(rows, share) };
    const runs = await Promise.all(
      queries.map(async (q) => {
        const about = { id: q.id, name: q.name, description: q.description, chartSpec: q.chartSpec, narrativeHints: q.narrativeHints };
        try {
          const request = { queryId: q.id, brandId: report.brandId, ...(q.parameterized && period ? { period } : {}) };
          const { result } = await runQuery(ctx, request, opts);
          const { rows, rowCount, truncated, schema, totalRows, nextCursor } = result;
          const section: ShownSection = { ...about, rows, rowCount, truncated, schema, totalRows, nextCursor };
          return { section, window: result.window };
        } catch (err) {
          const apiErr = toApiError(err);
          ctx.log[apiErr.status >= 500 ? 'error' : 'info']('show_report section failed', { section: q.id, code: apiErr.code });
          const section: ShownSection = { ...about, error: errorBody(apiErr, ctx.requestId).error };
          return { section, window: undefined };
        }
      }),
    );
    const window = runs.find((r) => r.window !== undefined)?.window;
    const data: ShowReportOutput = { brandId: report.brandId, report, ...(window ? { window } : {}), sections: runs.map((r) => r.section) };
    return toolReply(ShowReportOutput, data, { render: (d) => JSON.stringify(compactReport(d)), meta: viewOnly(data) });
  },
});
