import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { getReport, listReportQueries, listReports, REPORTS_PAGE } from '../operations/reports';
import { QueryListSchema, ReportDetailSchema, ReportListSchema, ReportTypeSchema } from '../schemas/catalog';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

const BrandIdInput = z.string().min(1).max(128).optional();
const REPORT_BRAND_INPUT =
  'The brandId list_reports returned with the report. Required with organization credentials for system and org ' +
  'reports (they apply to several brands); a brand report infers its brand; omit it with single-brand credentials.';
const ReportIdInput = z.string().min(1).max(128).describe('`reportId` from list_reports.');

export function registerReportTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'list_reports',
    {
      title: 'List reports',
      description:
        'List the reports these credentials can see (metadata only): `system` reports shared by every brand (listed ' +
        'once per brand, each run against that brand\'s own data), `org` reports shared in the organization, and the ' +
        "brand's own `brand` reports. First step of flow B (stored queries): pick a report, then call " +
        'list_report_queries with its reportId and brandId and run a section with run_query. ' +
        'Paged: when `hasMore` is true, call again with `cursor` set to `nextCursor` (same brandId and type) until it is null.',
      inputSchema: z.strictObject({
        brandId: BrandIdInput.describe(
          'Narrow to one brand (brandId from list_brands). Omit to list across every brand these credentials reach.',
        ),
        type: ReportTypeSchema.optional().describe(
          'Only reports of this ownership: system (global shared), org (shared in the organization) or brand (the brand\'s own). Omit for all.',
        ),
        limit: z
          .number()
          .int()
          .min(REPORTS_PAGE.min)
          .max(REPORTS_PAGE.max)
          .optional()
          .describe(`Page size, ${REPORTS_PAGE.min} to ${REPORTS_PAGE.max}; default ${REPORTS_PAGE.default}.`),
        cursor: z
          .string()
          .min(1)
          .max(2048)
          .optional()
          .describe('`nextCursor` from the previous page, with the same brandId and type; omit for the first page.'),
      }),
      outputSchema: ReportListSchema,
      annotations: { title: 'List reports', ...READ_ONLY },
    },
    (input) => runTool(ctx, 'list_reports', async () => toolSuccess(ReportListSchema, await listReports(ctx, input))),
  );

  server.registerTool(
    'get_report',
    {
      title: 'Get report',
      description:
        'Get one report with its markdown `instructions` (how to read and present it) and `dashboardConfig` (layout ' +
        'of its tiles, any JSON, or null). Use before writing up a report built from list_report_queries results.',
      inputSchema: z.strictObject({
        reportId: ReportIdInput,
        brandId: BrandIdInput.describe(REPORT_BRAND_INPUT),
      }),
      outputSchema: ReportDetailSchema,
      annotations: { title: 'Get report', ...READ_ONLY },
    },
    (input) => runTool(ctx, 'get_report', async () => toolSuccess(ReportDetailSchema, await getReport(ctx, input))),
  );

  server.registerTool(
    'list_report_queries',
    {
      title: 'List report queries',
      description:
        "List a report's queries (sections) in order. Each `id` runs with run_query as `queryId`. A query with " +
        '`parameterized: true` has a template `sql` whose {dataset}, {start_date} and {end_date} slots the server fills: ' +
        'send run_query a `period` (cadence DAILY/WEEKLY/MONTHLY, or startDate + endDate); without one the last full ' +
        'month is used. `narrativeHints` say how to write the section up; `chartSpec` describes its chart.',
      inputSchema: z.strictObject({
        reportId: ReportIdInput,
        brandId: BrandIdInput.describe(REPORT_BRAND_INPUT),
      }),
      outputSchema: QueryListSchema,
      annotations: { title: 'List report queries', ...READ_ONLY },
    },
    (input) => runTool(ctx, 'list_report_queries', async () => toolSuccess(QueryListSchema, await listReportQueries(ctx, input))),
  );
}
