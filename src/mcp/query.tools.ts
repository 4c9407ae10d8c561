import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { intVar } from '../env';
import { ApiError } from '../errors';
import { runQuery } from '../operations/run-query';
import { PeriodSchema, RawSqlQuerySchema, RunQueryRequestSchema, RunQueryResponseSchema, StoredQuerySchema } from '../schemas/run-query';
import { BRAND_ID_INPUT, PAGING, READ_MEMORIES, STATEMENT_RULE, TABLE_DISCOVERY, TABLE_NAMING } from './guidance';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

const RunQueryOutput = RunQueryResponseSchema.extend({
  note: z.string().optional().describe('Present when `truncated` is true: how to fetch the rows that were cut.'),
});

const RunQueryInput = {
  sql: RawSqlQuerySchema.shape.sql
    .optional()
    .describe(
      `Raw SQL (flow A). ${STATEMENT_RULE} ${TABLE_NAMING} Send either sql or queryId, not both.`,
    ),
  queryId: StoredQuerySchema.shape.queryId
    .optional()
    .describe('Stored query to run (flow B): an `id` from list_report_queries or list_saved_queries. Send either sql or queryId.'),
  period: PeriodSchema.optional().describe(
    'Date window for a parameterized stored query (only with queryId): { cadence: DAILY | WEEKLY | MONTHLY } (DAILY = ' +
      'yesterday, WEEKLY = the 7 days ending yesterday, MONTHLY = last full month) or { startDate, endDate } as ' +
      'YYYY-MM-DD, inclusive. Omitted: the last full month. Saved (non-parameterized) queries take no period.',
  ),
  brandId: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe(`${BRAND_ID_INPUT} A stored query owned by one brand infers it.`),
  dryRun: z
    .boolean()
    .optional()
    .describe('true: validate and estimate bytes scanned (stats.totalBytesProcessed) without running or billing the query.'),
};

type RunQueryToolInput = {
  [K in keyof typeof RunQueryInput]: z.output<(typeof RunQueryInput)[K]>;
};

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

export function registerQueryTools(server: McpServer, { ctx }: ToolDeps) {
  server.registerTool(
    'run_query',
    {
      title: 'Run query',
      description:
        "Run a read-only query against one brand's warehouse dataset and get rows back. Two ways: " +
        '(A) raw `sql`: list_brands gives the dataset; ' +
        `${TABLE_NAMING} ${TABLE_DISCOVERY} ${READ_MEMORIES} ${STATEMENT_RULE} ` +
        '(B) `queryId` from list_report_queries or list_saved_queries, plus `period` for parameterized queries. ' +
        'Use dryRun: true to validate and see bytes scanned first. Every run counts against a daily usage limit ' +
        'and a per-query byte ceiling. ' +
        `${PAGING} Prefer aggregates (GROUP BY, SUM) over raw rows.`,
      inputSchema: RunQueryInput,
      outputSchema: RunQueryOutput,
      // Read-only, but not idempotent: each run spends the daily usage budget.
      annotations: { title: 'Run query', readOnlyHint: true, idempotentHint: false, openWorldHint: false },
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
