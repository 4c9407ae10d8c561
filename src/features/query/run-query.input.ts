/**
 * run_query's input, once: its fields with the words each reader gets, the rule that decides which request a value
 * is, and the two projections of both: REST's body (`RunQueryRequest`, a oneOf of the closed `RawSqlQuery` and
 * `StoredQuery`) and the MCP tool's flat arguments (the same fields, plus `cursor`, `cancel` and `maxRows`).
 * Both surfaces refuse a bad shape through `requestShape`; each keeps the words its callers have always read.
 */
import { z } from '@hono/zod-openapi';
import { CADENCE_DESCRIPTION, CADENCES, MAX_PERIOD_DAYS, periodProblem } from './period';
import { MAX_SQL_LENGTH } from '../../sql/guard';
import { BrandIdField, QueryIdField } from '../../schemas/fields';
import { invalidArgument } from '../../mcp/tool-result';

// ---------------------------------------------------------------------------------------------------------------
// The period: a field of a stored query (and of show_report, which runs report queries the same way).

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

// ---------------------------------------------------------------------------------------------------------------
// The fields, once. `schema` is the value's type and limits; `doc` what the OpenAPI document adds (for people and
// client generators; a field without it carries its words in its own schema or component); `tool` what the model
// reads in tools/list (shorter, naming the other tools).

/** Longest cursor accepted (the signed token is about 300 characters). */
const MAX_RESULT_CURSOR_LENGTH = 1024;

const ResultCursorField = z
  .string()
  .min(1)
  .max(MAX_RESULT_CURSOR_LENGTH)
  .openapi({ description: '`nextCursor` from a capped run result or page, unchanged.' });

interface Field {
  schema: z.ZodType;
  doc?: { description: string; example?: string };
  tool: string;
}

const FIELDS = {
  sql: {
    schema: z.string().min(1).max(MAX_SQL_LENGTH),
    doc: {
      description:
        'One read-only statement (SELECT or WITH). Reference tables as `service-v1.<dataset>.<table>` in backticks, using the dataset' +
        ' from the brands list.',
      example: 'SELECT channel, SUM(revenue) AS revenue FROM `service-v1.acme.fact__orders` GROUP BY channel',
    },
    tool: 'Raw SQL (flow A). Send exactly one of sql, queryId or cursor.',
  },
  queryId: { schema: QueryIdField, tool: 'An id from list_report_queries or list_saved_queries (flow B).' },
  period: {
    schema: PeriodSchema,
    tool:
      'Parameterized queryId only: cadence DAILY (yesterday), WEEKLY (the rolling 7 days to yesterday), MONTHLY (last ' +
      "full month; default), LAST_FULL_WEEK (Mon-Sun), LAST_FULL_QUARTER; or startDate + endDate, in the brand's timezone.",
  },
  brandId: {
    schema: BrandIdField,
    doc: { description: 'Target brand. Required for organization keys unless it can be inferred (a query owned by one brand).' },
    tool: 'A stored query owned by one brand infers it.',
  },
  dryRun: {
    schema: z.boolean(),
    doc: { description: 'Validate and estimate bytes scanned (`stats.totalBytesProcessed`) without executing or billing.' },
    tool: 'Validate and estimate bytes scanned without running or billing.',
  },
  // The tool's own: REST reads a next page at its own endpoint (QueryPageRequest) and has no pending cursors.
  cursor: {
    schema: ResultCursorField,
    tool:
      'nextCursor of an earlier result, sent alone (or with maxRows): the next page of that result (no new run, nothing billed; 6 h, ' +
      'this key only), or of a pending (still running) query: its rows once done.',
  },
  cancel: { schema: z.boolean(), tool: 'With a pending cursor: cancel that query (what it billed so far still counts).' },
  maxRows: {
    schema: z.number().int().min(1),
    tool: 'Fewer rows per result than the ceiling, e.g. for a first look; pages still stop at the byte cap.',
  },
} satisfies Record<string, Field>;

type FieldName = keyof typeof FIELDS;
type SchemaOf<F extends FieldName> = (typeof FIELDS)[F]['schema'];

/** A field of REST's body: the schema with the document's words, optional unless the shape requires it. */
function bodyField<F extends FieldName>(name: F, required: true): SchemaOf<F>;
function bodyField<F extends FieldName>(name: F, required: false): z.ZodOptional<SchemaOf<F>>;
function bodyField(name: FieldName, required: boolean): z.ZodType {
  const field: Field = FIELDS[name];
  const schema = required ? field.schema : field.schema.optional();
  return field.doc ? schema.openapi(field.doc) : schema;
}

/** A field of the tool's flat arguments: every one optional (`requestShape` decides which combinations stand). */
function toolField<F extends FieldName>(name: F): z.ZodOptional<SchemaOf<F>> {
  return FIELDS[name].schema.optional().describe(FIELDS[name].tool);
}

// ---------------------------------------------------------------------------------------------------------------
// Projection (a): REST's body, two closed shapes.

const RawSqlQuerySchema = z
  .strictObject({ sql: bodyField('sql', true), brandId: bodyField('brandId', false), dryRun: bodyField('dryRun', false) })
  .openapi('RawSqlQuery');

const StoredQuerySchema = z
  .strictObject({
    queryId: bodyField('queryId', true),
    period: bodyField('period', false),
    brandId: bodyField('brandId', false),
    dryRun: bodyField('dryRun', false),
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

export const QueryPageRequestSchema = z
  .strictObject({ cursor: ResultCursorField })
  .openapi('QueryPageRequest', { description: 'The next page of a stored result: `nextCursor` from the previous response.' });

export type RunQueryRequest = z.infer<typeof RunQueryRequestSchema>;
export type QueryPageRequest = z.infer<typeof QueryPageRequestSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Projection (b): the MCP tool's flat arguments. Strict: an argument the schema does not name is refused, as REST
// refuses unknown properties.

export const RunQueryArguments = z.strictObject({
  sql: toolField('sql'),
  queryId: toolField('queryId'),
  period: toolField('period'),
  brandId: toolField('brandId'),
  dryRun: toolField('dryRun'),
  cursor: toolField('cursor'),
  cancel: toolField('cancel'),
  maxRows: toolField('maxRows'),
});

type RunQueryArgs = z.output<typeof RunQueryArguments>;

// ---------------------------------------------------------------------------------------------------------------
// The rule, once: which request a value is, or the problem when it is none.

/** The fields a request is made of (`cursor` stands alone: it already names its result). */
const REQUEST_FIELDS = ['sql', 'queryId', 'period', 'brandId', 'dryRun'] as const;

type RequestShape =
  | { shape: 'raw' | 'stored' | 'page' }
  | { problem: 'both' | 'neither' | 'periodWithSql' }
  | { problem: 'withCursor'; field: (typeof REQUEST_FIELDS)[number] };

/**
 * Which request `value` is, by the fields it carries: a next page (`cursor` alone; the tool's arguments only, as
 * REST pages at its own endpoint), raw SQL (`sql`) or a stored query (`queryId`): exactly one of the two, and
 * `period` with `queryId` only. A field counts when present (a JSON body or parsed arguments never hold undefined).
 */
function requestShape(value: Partial<Record<FieldName, unknown>>, surface: 'body' | 'arguments'): RequestShape {
  const has = (name: FieldName) => value[name] !== undefined;
  if (surface === 'arguments' && has('cursor')) {
    const field = REQUEST_FIELDS.find(has);
    return field ? { problem: 'withCursor', field } : { shape: 'page' };
  }
  if (has('sql') && has('queryId')) return { problem: 'both' };
  if (!has('sql') && !has('queryId')) return { problem: 'neither' };
  if (has('sql') && has('period')) return { problem: 'periodWithSql' };
  return { shape: has('sql') ? 'raw' : 'stored' };
}

type Issues = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

/**
 * REST's issues for a body the union refused (`error`): zod's union error lists both branches, which reads badly, so
 * the rule's problem in REST's words, or the issues of the shape the caller meant. A raw-SQL body with `period` is
 * that shape's unknown property, as the closed `RawSqlQuery` says in the document.
 */
export function bodyIssues(body: unknown, error: Issues): Issues {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
  const decided = requestShape(fields, 'body');
  const only = (message: string) => ({ issues: [{ path: [], message }] });
  if ('problem' in decided && decided.problem === 'both') return only('send either sql or queryId, not both');
  if ('problem' in decided && decided.problem === 'neither') return only('sql or queryId is required');
  const meant = 'shape' in decided && decided.shape === 'stored' ? StoredQuerySchema : RawSqlQuerySchema;
  const branch = meant.safeParse(body);
  return branch.success ? error : branch.error;
}

const ONE_OF = 'send exactly one of sql (raw SQL), queryId (a stored query id) or cursor (the next page of a result)';

/** The tool's arguments as one of the operation's requests, or the rule's problem in the tool's words. */
export function argumentsRequest(
  args: Omit<RunQueryArgs, 'cancel' | 'maxRows'>,
): { page: QueryPageRequest; run?: undefined } | { run: RunQueryRequest; page?: undefined } {
  const decided = requestShape(args, 'arguments');
  if ('problem' in decided) {
    switch (decided.problem) {
      case 'withCursor':
        throw invalidArgument(
          `send cursor alone: it already names the result (remove ${decided.field})`,
          decided.field,
          'not allowed with cursor',
        );
      case 'both':
        throw invalidArgument(ONE_OF, 'queryId', 'send sql or queryId, not both');
      case 'neither':
        throw invalidArgument(ONE_OF, '(arguments)', 'send sql, queryId or cursor');
      case 'periodWithSql':
        throw invalidArgument('period applies to stored queries only; put the dates into the SQL itself', 'period', 'not allowed with sql');
    }
  }
  if (decided.shape === 'page') return { page: QueryPageRequestSchema.parse({ cursor: args.cursor }) };
  const request = Object.fromEntries(REQUEST_FIELDS.flatMap((name) => (args[name] === undefined ? [] : [[name, args[name]]])));
  return { run: RunQueryRequestSchema.parse(request) };
}
