import type { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { intVar } from '../env';
import { ApiError } from '../errors';
import { runQuery } from '../operations/run-query';
import { PeriodSchema, RawSqlQuerySchema, RunQueryRequestSchema, RunQueryResponseSchema, StoredQuerySchema } from '../schemas/run-query';
import { PAGING } from './guidance';
import { resultSizeMeta, runTool, toolSchema, toolSuccess, type ToolDeps } from './tool-result';

const RunQueryOutput = RunQueryResponseSchema.extend({
  note: z.string().optional().describe('Present when `truncated` is true: how to fetch the rows that were cut.'),
});

// Strict: an argument the schema does not name is refused, as REST refuses unknown properties.
const RunQueryInput = z.strictObject({
  sql: RawSqlQuerySchema.shape.sql
    .optional()
    .describe('Raw SQL (flow A); send sql or queryId, not both.'),
  queryId: StoredQuerySchema.shape.queryId
    .optional()
    .describe('An id from list_report_queries or list_saved_queries (flow B).'),
  period: PeriodSchema.optional().describe(
    'Parameterized queryId only: cadence DAILY (yesterday), WEEKLY (7 days to yesterday) or MONTHLY (last full ' +
      "month, the default), or startDate + endDate (YYYY-MM-DD, inclusive), in the brand's timezone.",
  ),
  brandId: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('A stored query owned by one brand infers it.'),
  dryRun: z
    .boolean()
    .optional()
    .describe('Validate and estimate bytes scanned without running or billing.'),
});

type RunQueryToolInput = z.output<typeof RunQueryInput>;

/** The tool's flat arguments as the operation's request: exactly one of the two shapes, checked by its own schema. */
function toRunQueryRequest(input: RunQueryToolInput) {
  const { sql, queryId, period, brandId, dryRun } = input;
  if ((sql === undefined) === (queryId === undefined)) {
    throw new ApiError('VALIDATION', 'send exactly one of sql (raw SQL) or queryId (a stored query id)', {
      details: { in: 'arguments', issues: [{ path: sql === undefined ? '(arguments)' : 'queryId', message: sql === undefined ? 'send sql or queryId' : 'send sql or queryId, not both' }] },
    });
  }
  if (sql !== undefined && period !== undefined) {
    throw new ApiError('VALIDATION', 'period applies to stored queries only; put the dates into the SQL itself', {
      details: { in: 'arguments', issues: [{ path: 'period', message: 'not allowed with sql' }] },
    });
  }
  const request = Object.fromEntries(Object.entries({ sql, queryId, period, brandId, dryRun }).filter(([, v]) => v !== undefined));
  return RunQueryRequestSchema.parse(request);
}

function pagingNote(rowCount: number, stored: boolean): string {
  return (
    `Only the first ${rowCount} rows are returned (assistant result cap). ${PAGING}` +
    (stored
      ? ' A stored query cannot be changed: copy its SQL (list_report_queries / list_saved_queries), fill any {slot} yourself and run it as sql with LIMIT/OFFSET.'
      : ` Next page: add ORDER BY <unique column> LIMIT ${rowCount} OFFSET ${rowCount} to the same SQL.`)
  );
}

/** Room for what a result carries besides its rows (columns, stats, the paging note). */
const RESULT_ENVELOPE_CHARS = 16_384;

export function registerQueryTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'run_query',
    {
      title: 'Run query',
      description:
        "Run one read-only query on one brand's dataset: raw sql (flow A) or a stored queryId (flow B). Rows are " +
        'capped (see truncated); each run counts against the daily usage limit and a per-query byte ceiling.',
      inputSchema: toolSchema(RunQueryInput),
      outputSchema: toolSchema(RunQueryOutput),
      // Read-only, but not idempotent: each run spends the daily usage budget.
      annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
      // The text copy of a capped result is about the row cap's bytes plus columns, stats and the paging note.
      _meta: resultSizeMeta(intVar(ctx.env, 'MCP_MAX_RESULT_BYTES') + RESULT_ENVELOPE_CHARS),
    },
    (input) =>
      runTool(ctx, 'run_query', async () => {
        const request = toRunQueryRequest(input);
        const { result } = await runQuery(ctx, request, {
          rowCap: intVar(ctx.env, 'MCP_ROW_CAP'),
          maxResultBytes: intVar(ctx.env, 'MCP_MAX_RESULT_BYTES'),
        });
        if (!result.truncated) return toolSuccess(RunQueryOutput, result);
        const note = pagingNote(result.rowCount, 'queryId' in request);
        return toolSuccess(RunQueryOutput, { ...result, note }, [note]);
      }),
  );
}
