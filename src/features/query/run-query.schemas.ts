import { z } from '@hono/zod-openapi';
import { CADENCES } from './period';

// What run_query answers. What it takes (REST's body, the tool's arguments, the rule between them) is
// run-query.input.ts.

export const FieldSchema: z.ZodType<{
  name: string;
  type: string;
  mode?: string;
  fields?: unknown[];
  rangeElementType?: { type: string };
  timestampPrecision?: number;
}> = z
  .object({
    name: z.string(),
    type: z
      .string()
      .openapi({ description: 'BigQuery REST type name (STRING, INTEGER, FLOAT, NUMERIC, BOOLEAN, DATE, TIMESTAMP, RECORD, RANGE, ...)' }),
    mode: z.string().optional().openapi({ description: 'NULLABLE, REQUIRED or REPEATED' }),
    fields: z.array(z.any()).optional().openapi({ description: 'Sub-fields of a RECORD' }),
    rangeElementType: z
      .object({ type: z.string() })
      .optional()
      .openapi({ description: 'For a RANGE column: the type of its bounds (DATE, DATETIME or TIMESTAMP)' }),
    timestampPrecision: z
      .number()
      .int()
      .optional()
      .openapi({
        description:
          "For a TIMESTAMP or RANGE<TIMESTAMP> column, BigQuery's digits of second fractions when it sends them: 12 for a " +
          'picosecond TIMESTAMP(12) column, whose values this API still gives to the microsecond.',
      }),
  })
  .openapi('Field');

export const RunQueryStatsSchema = z
  .strictObject({
    dryRun: z.boolean(),
    totalBytesBilled: z.number().openapi({ description: 'Bytes billed (drives cost); 0 for a dry run.' }),
    totalBytesProcessed: z.number().openapi({ description: 'Bytes processed, or the estimate for a dry run.' }),
  })
  .openapi('RunQueryStats');

// ---------------------------------------------------------------------------------------------------------------
// Result paging: fields added to the run result (the page request is run-query.input.ts's QueryPageRequestSchema).

export const ResolvedWindowSchema = z
  .strictObject({
    startDate: z.string().openapi({ description: 'First day of the window (inclusive), YYYY-MM-DD.', example: '2026-10-01' }),
    endDate: z.string().openapi({ description: 'Last day of the window (inclusive), YYYY-MM-DD.', example: '2026-10-31' }),
    cadence: z.enum(CADENCES).optional().openapi({ description: 'The cadence sent, when one was.' }),
    timezone: z.string().openapi({ description: "IANA time zone the window was computed in (the brand's, or UTC).", example: 'UTC' }),
  })
  .openapi('ResolvedWindow', { description: 'The date window a parameterized stored query ran with.' });

const ResultPagingFields = {
  totalRows: z
    .number()
    .int()
    .openapi({ description: 'Rows in the whole result (0 for a dry run); `rowCount` is the rows in this response.' }),
  nextCursor: z
    .string()
    .nullable()
    .openapi({
      description:
        'Opaque, signed token for the next page of this result (read from the stored result: no new run, nothing billed); null on the ' +
        'last page. Bound to this key and brand; expires 6 hours after the run.',
    }),
  window: ResolvedWindowSchema.optional().openapi({ description: 'Stored queries with date slots: the window that ran.' }),
};

export type ResolvedWindow = z.infer<typeof ResolvedWindowSchema>;

export const RunQueryResponseSchema = z
  .object({
    brandId: z.string().openapi({ description: 'Brand the query ran against.' }),
    rows: z.array(z.record(z.string(), z.any())).openapi({
      description:
        'Result rows in this response, keyed by column name. Values that a JSON number cannot hold exactly come back as ' +
        'strings: INTEGER (INT64) is a number within ±(2^53 − 1) and the exact decimal string beyond; NUMERIC and ' +
        'BIGNUMERIC are always the exact decimal string; FLOAT is a number, with NaN and ±Infinity as strings. ' +
        'TIMESTAMP is ISO 8601 UTC; DATE, DATETIME, TIME and BYTES (base64) are strings; RECORD is an object; ' +
        'REPEATED an array; JSON the parsed value.',
    }),
    rowCount: z.number().int().openapi({ description: 'Number of rows in this response.' }),
    truncated: z.boolean().openapi({
      description:
        'True when results were capped: pass `nextCursor` to POST /v1/data/query/page for the next page (or page with LIMIT / OFFSET ' +
        'in the SQL).',
    }),
    schema: z.array(FieldSchema).optional().openapi({ description: 'Result field names and types.' }),
    stats: RunQueryStatsSchema.optional(),
    ...ResultPagingFields,
  })
  .openapi('RunQueryResponse');

export type RunQueryResponse = z.infer<typeof RunQueryResponseSchema>;
