import type { McpServer } from '@modelcontextprotocol/server';
import { getReport, listReportQueries, listReports, REPORTS_PAGE } from './reports';
import { BrandIdField, CursorField, pageLimitArgument, ReportIdField } from '../../schemas/fields';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, ReportTypeSchema } from '../../schemas/catalog';
import { runTool, toolInput, toolSchema, toolSuccess, type ToolDeps } from '../../mcp/tool-result';

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

const BrandIdInput = BrandIdField.optional();
const ReportInput = toolInput({
  reportId: ReportIdField,
  brandId: BrandIdInput.describe('The brandId list_reports gave with the report.'),
});
const ListReportsInput = toolInput({
  brandId: BrandIdInput.describe('Narrow to one brand.'),
  type: ReportTypeSchema.optional(),
  limit: pageLimitArgument(REPORTS_PAGE).optional(),
  cursor: CursorField.optional(),
});

export function registerReportTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_reports',
    {
      title: 'List reports',
      description:
        "Reports (metadata): system (every brand's, listed once per brand), org and the brand's own. " +
        'Paged: while hasMore, call again with cursor = nextCursor (same brandId and type).',
      inputSchema: ListReportsInput,
      outputSchema: toolSchema(ReportListSchema),
      annotations: READ_ONLY,
    },
    (input) => runTool(ctx, 'list_reports', async () => toolSuccess(ReportListSchema, await listReports(ctx, input))),
  );

  server.registerTool(
    'get_report',
    {
      title: 'Get report',
      description: "A report's markdown instructions (how to read and present it) and dashboardConfig (its tiles' layout).",
      inputSchema: ReportInput,
      outputSchema: toolSchema(ReportDetailSchema),
      annotations: READ_ONLY,
    },
    (input) => runTool(ctx, 'get_report', async () => toolSuccess(ReportDetailSchema, await getReport(ctx, input))),
  );

  server.registerTool(
    'list_report_queries',
    {
      title: 'List report queries',
      description:
        "A report's sections in order; run one with run_query { queryId: id }. parameterized: the server fills " +
        "{dataset}, {start_date} and {end_date} from run_query's period (default: last full month).",
      inputSchema: ReportInput,
      outputSchema: toolSchema(QueryListSchema),
      annotations: READ_ONLY,
    },
    (input) => runTool(ctx, 'list_report_queries', async () => toolSuccess(QueryListSchema, await listReportQueries(ctx, input))),
  );
}
