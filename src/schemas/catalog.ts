import { z } from '@hono/zod-openapi';

/** Wire schemas of the catalog (reports, report sections, saved queries). The types are inferred from these. */

export const ReportTypeSchema = z.enum(['system', 'org', 'brand']).openapi({
  description: "Ownership: `system` = global shared report, `org` = shared inside the organization, `brand` = the brand's own.",
  example: 'system',
});
export type ReportType = z.infer<typeof ReportTypeSchema>;

/**
 * Any JSON value. Spelled out as a union (not z.unknown()) so the document marks it required and says what
 * it may be; z.json() would be exact but the OpenAPI generator recurses on it forever.
 */
export const JsonValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);
export type JsonValue = z.infer<typeof JsonValueSchema>;

export const CoverageSchema = z
  .object({
    firstDay: z.string().openapi({ description: 'First day with data, YYYY-MM-DD.', example: '2025-10-21' }),
    lastDay: z.string().openapi({ description: 'Last day with data, YYYY-MM-DD.', example: '2026-11-24' }),
  })
  .openapi('Coverage', {
    description:
      "The days a table (or, in the brands list, any table of the brand's dataset) holds data for, from the tables' " +
      '`data_first_day` / `data_last_day` labels (set by the pipeline that loads them), read with BigQuery `tables.get` / ' +
      '`tables.list`, never a query; null when no table has such labels.',
  });
export type Coverage = z.infer<typeof CoverageSchema>;

export const BrandSchema = z
  .object({
    brandId: z.string().openapi({ example: 'brand_acme' }),
    name: z.string().nullable().openapi({ example: 'Acme Outdoor' }),
    dataset: z.string().nullable().openapi({ description: 'null when the brand has no provisioned dataset', example: 'acme' }),
    timezone: z
      .string()
      .optional()
      .openapi({
        description:
          'IANA time zone of the brand; stored-query periods ("yesterday", "last full month") are computed in it. ' +
          'UTC when the brand has none.',
        example: 'Europe/Berlin',
      }),
    queryable: z.boolean().optional().openapi({
      description: 'Whether queries can run for this brand now (it has a provisioned dataset); false: a run answers an error.',
      example: true,
    }),
    currency: z.string().nullable().optional().openapi({
      description:
        "Extension: ISO 4217 code of the currency the brand's money columns are in, from the brand's settings; null when not recorded.",
      example: 'USD',
    }),
    coverage: CoverageSchema.nullable()
      .optional()
      .openapi({
        description:
          "Extension: first and last day with data over the brand's tables, from the warehouse's table labels " +
          '(`tables.list`: no query, nothing billed; reused for 5 minutes). null when the brand has no dataset, no ' +
          'table carries coverage labels, or the warehouse could not be asked (logged with the request id).',
      }),
  })
  .openapi('Brand');
export type Brand = z.infer<typeof BrandSchema>;

export const ReportSchema = z
  .object({
    reportId: z.string().openapi({ example: 'rpt_business_overview' }),
    brandId: z.string().openapi({ description: "The brand whose data this report's queries resolve against.", example: 'brand_acme' }),
    name: z.string().openapi({ example: 'Business Overview' }),
    description: z.string().nullable(),
    queryCount: z.number().int().openapi({ description: 'Number of queries (sections) in the report.', example: 4 }),
    type: ReportTypeSchema,
    runnable: z.boolean().openapi({
      description:
        'Extension: false when the brand (`brandId`) has no provisioned dataset yet (its `dataset` is null in the brands list). ' +
        'The report is listed so the catalog shows what the brand will have, but running its queries answers 409 ' +
        '`BRAND_NOT_PROVISIONED` until the dataset exists.',
      example: true,
    }),
  })
  .openapi('Report', {
    description:
      "Report metadata. Shared (`system`) reports run against each brand's own data, so they appear once per brand. " +
      'Check `runnable` before running: a brand without a dataset cannot run anything yet.',
  });
export type Report = z.infer<typeof ReportSchema>;

export const ReportDetailSchema = ReportSchema.extend({
  instructions: z.string().nullable().openapi({ description: 'Markdown instructions for the report.' }),
  dashboardConfig: JsonValueSchema.openapi({
    description: 'Dashboard layout/tile config (any JSON value); its shape varies; null when the report has none.',
  }),
}).openapi('ReportDetail', { description: 'A report with its markdown instructions and dashboard config.' });
export type ReportDetail = z.infer<typeof ReportDetailSchema>;

export const QuerySchema = z
  .object({
    id: z.string().openapi({ description: 'Value to send as `queryId` when running.', example: 'rq_overview_channels' }),
    name: z.string().nullable(),
    description: z.string().nullable(),
    sql: z.string().openapi({
      description: 'For report queries: template SQL with `{slot}` placeholders; for saved queries: concrete SQL.',
    }),
    tables: z.array(z.string()).nullable().openapi({ description: 'Source tables for saved queries when known; null for report queries.' }),
    parameterized: z.boolean().openapi({ description: 'True when the SQL has slots the server fills at run time; send a `period`.' }),
    parameters: z.array(z.string()).openapi({
      description: 'Placeholder names used by the SQL; empty for saved queries.',
      example: ['dataset', 'start_date', 'end_date'],
    }),
    ordinal: z.number().int().optional().openapi({ description: 'Section order within its report (report sections only).' }),
    narrativeHints: z
      .string()
      .nullable()
      .optional()
      .openapi({ description: 'Guidance for writing up the section (report sections only).' }),
    chartSpec: JsonValueSchema.optional().openapi({ description: "Spec for the section's inline chart, when set (report sections only)." }),
    brandId: z
      .string()
      .optional()
      .openapi({
        description:
          'Extension, saved queries only: the brand that owns the saved query (and that a run by `id` resolves against). ' +
          "Present on every saved query, so a list across an organization's brands says whose each one is.",
        example: 'brand_acme',
      }),
  })
  .openapi('Query');
export type Query = z.infer<typeof QuerySchema>;

export const ReportListSchema = z.object({
  reports: z.array(ReportSchema),
  nextCursor: z.string().nullable().openapi({ description: 'Pass back as `cursor` for the next page; null on the last page.' }),
  hasMore: z.boolean().openapi({ description: 'True when more reports remain (nextCursor is set).' }),
});

export const QueryListSchema = z.object({ queries: z.array(QuerySchema) });
