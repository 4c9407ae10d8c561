import { z } from '@hono/zod-openapi';
import { CADENCE_DESCRIPTION, CADENCES, MAX_PERIOD_DAYS, periodProblem } from './period';
import { MAX_SQL_LENGTH } from '../../sql/guard';
import { BrandIdField as BrandId, QueryIdField } from '../../schemas/fields';

const BrandIdField = BrandId.optional().openapi({
  description: 'Target brand. Required for organization keys unless it can be inferred (a query owned by one brand).',
});

const DryRunField = z
  .boolean()
  .optional()
  .openapi({ description: 'Validate and estimate bytes scanned (`stats.totalBytesProcessed`) without executing or billing.' });

// `.meta()` (not `.openapi()`): both the OpenAPI generator and z.toJSONSchema (PERIOD_SHAPES below) read it.
const CadenceField = z.enum(CADENCES).meta({ description: `Named window: ${CADENCE_DESCRIPTION}` });
const StartDateField = z.string().meta({ format: 'date', description: 'ISO date YYYY-MM-DD; send with endDate.', example: '2026-10-01' });
const EndDateField = z.string().meta({ format: 'date', description: 'ISO date YYYY-MM-DD; send with startDate.', example: '2026-10-31' });

/**
 * The two exclusive shapes of a period, as JSON Schema for the document only (generated clients must
 * refuse a cadence with dates, or one date alone). The runtime check is PeriodSchema's periodProblem, which names
 * the mistake in words; these closed shapes say the same rule to client generators.
 */
function documentShape(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...shape } = z.toJSONSchema(schema, { io: 'input' });
  return shape;
}
const PERIOD_SHAPES = [
  documentShape(z.strictObject({ cadence: CadenceField }).describe('A rolling window.')),
  documentShape(
    z.strictObject({ startDate: StartDateField, endDate: EndDateField }).describe('An explicit window: both dates, inclusive.'),
  ),
];

export const PeriodSchema = z
  .strictObject({
    cadence: CadenceField.optional(),
    startDate: StartDateField.optional(),
    endDate: EndDateField.optional(),
  })
  .superRefine((p, ctx) => {
    const problem = periodProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  // The document states the exclusive shapes as `oneOf` beside the properties: a value must fit the closed object
  // AND exactly one closed shape, so `{ cadence, startDate }` and `{ startDate }` are refused by the schema too.
  .openapi('Period', {
    description:
      `Time window for a parameterized query. Exactly one of: a cadence, or startDate + endDate (inclusive, at most ` +
      `${MAX_PERIOD_DAYS} days). Omitted: the last full month. Dates are in the brand's time zone (UTC when it has none).`,
    oneOf: PERIOD_SHAPES,
  });

export const RawSqlQuerySchema = z
  .strictObject({
    sql: z
      .string()
      .min(1)
      .max(MAX_SQL_LENGTH)
      .openapi({
        description:
          'One read-only statement (SELECT or WITH). Reference tables as `service-v1.<dataset>.<table>` in backticks, using the dataset' +
          ' from the brands list.',
        example: 'SELECT channel, SUM(revenue) AS revenue FROM `service-v1.acme.fact__orders` GROUP BY channel',
      }),
    brandId: BrandIdField,
    dryRun: DryRunField,
  })
  .openapi('RawSqlQuery');

export const StoredQuerySchema = z
  .strictObject({
    queryId: QueryIdField,
    period: PeriodSchema.optional(),
    brandId: BrandIdField,
    dryRun: DryRunField,
  })
  .openapi('StoredQuery');

// `oneOf` (not zod's default `anyOf`) over the two closed shapes: generated clients then refuse `{ sql, queryId }`
// and `{ sql, period }` at compile time, as the server refuses them with 400 VALIDATION.
export const RunQueryRequestSchema = z
  .union([RawSqlQuerySchema, StoredQuerySchema])
  .openapi(
    'RunQueryRequest',
    { description: 'Exactly one of two shapes: raw SQL (`sql`) or a stored query (`queryId`). Unknown properties are rejected.' },
    { unionPreferredType: 'oneOf' },
  );

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
// Result paging: fields added to the run result, and the page request. Kept apart from the request
// shapes above so the body's OneOf and this section merge independently.

/** Longest cursor accepted (the signed token is about 300 characters). */
export const MAX_RESULT_CURSOR_LENGTH = 1024;

export const ResultCursorField = z
  .string()
  .min(1)
  .max(MAX_RESULT_CURSOR_LENGTH)
  .openapi({ description: '`nextCursor` from a capped run result or page, unchanged.' });

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

export const QueryPageRequestSchema = z
  .strictObject({ cursor: ResultCursorField })
  .openapi('QueryPageRequest', { description: 'The next page of a stored result: `nextCursor` from the previous response.' });

export type QueryPageRequest = z.infer<typeof QueryPageRequestSchema>;
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

export type RunQueryRequest = z.infer<typeof RunQueryRequestSchema>;
export type RunQueryResponse = z.infer<typeof RunQueryResponseSchema>;
