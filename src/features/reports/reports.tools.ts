import { getReport, listReportQueries, listReports, REPORTS_PAGE } from './reports';
import { BrandIdField, CursorField, pageLimitArgument, ReportIdField } from '../../schemas/fields';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, ReportTypeSchema } from '../../schemas/catalog';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';

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
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => listReports(ctx, input),
});

export const getReportTool = defineTool({
  name: 'get_report',
  title: 'Get report',
  description: "A report's markdown instructions (how to read and present it) and dashboardConfig (its tiles' layout).",
  input: ReportInput,
  output: ReportDetailSchema,
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
  annotations: ANNOTATIONS.read,
  run: (input, { ctx }) => listReportQueries(ctx, input),
});
