import { getReport, listReportQueries, listReports, REPORTS_PAGE } from './reports';
import { BrandIdField, CursorField, pageLimitArgument, ReportIdField } from '../../schemas/fields';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, ReportTypeSchema, type Query, type Report } from '../../schemas/catalog';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';
import { nextPageLine, textTable } from '../../mcp/tool-result';

/** The reports, one line each (ids, ownership, sections, name); the descriptions are in the structured result. */
function reportsText({ reports, nextCursor }: { reports: Report[]; nextCursor: string | null }): string {
  const table = textTable(
    `${reports.length} report(s); system reports are listed once per brand, each runs on that brand's data.`,
    ['reportId', 'brandId', 'type', 'sections', 'name'],
    reports.map((r) => [r.reportId, r.brandId, r.type, r.runnable ? r.queryCount : `${r.queryCount} (brand not provisioned)`, r.name]),
  );
  return [table, ...nextPageLine(nextCursor)].join('\n');
}

/**
 * Stored queries, one line each: the id to run, its name, the period slots and (saved queries) its brand. The SQL
 * is in the structured result; `fetch` shows one in full to a client that reads only text.
 */
export function queriesText(queries: Query[], fetchId: (q: Query) => string): string {
  return textTable(
    `${queries.length} quer${queries.length === 1 ? 'y' : 'ies'}; run one with run_query { queryId }, ` +
      'send a period when it has date slots; fetch <fetchId> shows its SQL.',
    ['queryId', 'name', 'period slots', 'brandId', 'fetchId'],
    queries.map((q) => [q.id, q.name, q.parameters.filter((p) => p !== 'dataset').join(',') || null, q.brandId, fetchId(q)]),
  );
}

const BrandIdInput = BrandIdField.optional();
const ReportInput = {
  reportId: ReportIdField,
  brandId: BrandIdInput.describe('The brandId list_reports gave with the report.'),
};

export const listReportsTool = defineTool({
  name: 'list_reports',
  title: 'List reports',
  description:
    "Reports (metadata): system (every brand's, listed once per brand), org and the brand's own. " +
    'Paged: while hasMore, call again with cursor = nextCursor (same brandId and type).',
  input: {
    brandId: BrandIdInput.describe('Narrow to one brand.'),
    type: ReportTypeSchema.optional(),
    limit: pageLimitArgument(REPORTS_PAGE).optional(),
    cursor: CursorField.optional(),
  },
  output: ReportListSchema,
  text: reportsText,
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => listReports(ctx, input),
});

export const getReportTool = defineTool({
  name: 'get_report',
  title: 'Get report',
  description: "A report's markdown instructions (how to read and present it) and dashboardConfig (its tiles' layout).",
  input: ReportInput,
  output: ReportDetailSchema,
  // Mostly prose (the instructions): sent once, as compact JSON text, like describe_table.
  result: 'text',
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => getReport(ctx, input),
});

export const listReportQueriesTool = defineTool({
  name: 'list_report_queries',
  title: 'List report queries',
  description:
    "A report's sections in order; run one with run_query { queryId: id }. parameterized: the server fills " +
    "{dataset}, {start_date} and {end_date} from run_query's period (default: last full month).",
  input: ReportInput,
  output: QueryListSchema,
  text: ({ queries }, { reportId }) => queriesText(queries, (q) => `section:${reportId}:${q.id}`),
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => listReportQueries(ctx, input),
});
