import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { intVar } from '../env';
import { ApiError } from '../errors';
import { readQueryPage, runQuery, type RunQueryOutcome } from '../operations/run-query';
import {
  PeriodSchema,
  QueryPageRequestSchema,
  RawSqlQuerySchema,
  ResultCursorField,
  RunQueryRequestSchema,
  RunQueryResponseSchema,
  StoredQuerySchema,
} from '../schemas/run-query';
import { BRAND_ID_INPUT, PAGING, STATEMENT_RULE, TABLE_DISCOVERY, TABLE_NAMING } from './guidance';
import { renderResultText, resultCaps, rowsThatFit, type ResultCaps } from './result-text';
import { runTool, toolSuccess, type ToolDeps } from './tool-result';

const UsageOutput = z
  .strictObject({
    runsLimit: z.number().int(),
    runsRemaining: z.number().int(),
    bytesLimit: z.number(),
    bytesRemaining: z.number(),
    resetSeconds: z.number().int(),
    maxBytesBilled: z.number(),
  })
  .describe("What is left of this key's rolling 24-hour budget after this call, and its per-query byte ceiling.");

const RunQueryOutput = RunQueryResponseSchema.extend({
  note: z.string().optional().describe('Present when `truncated` is true: the caps as numbers and how to read the next page (the cursor).'),
  usage: UsageOutput,
});

const RunQueryInput = {
  sql: RawSqlQuerySchema.shape.sql
    .optional()
    .describe(
      `Raw SQL (flow A). ${STATEMENT_RULE} ${TABLE_NAMING} Send exactly one of sql, queryId or cursor.`,
    ),
  queryId: StoredQuerySchema.shape.queryId
    .optional()
    .describe('Stored query to run (flow B): an `id` from list_report_queries or list_saved_queries. Send exactly one of sql, queryId or cursor.'),
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
  cursor: ResultCursorField.optional().describe(
    'nextCursor of an earlier run_query result, alone (no sql, queryId, period, brandId or dryRun): returns the next page of that same ' +
      'result from the warehouse\'s stored copy. No new run, nothing billed; valid for 6 hours, for this key only.',
  ),
};

type RunQueryToolInput = {
  [K in keyof typeof RunQueryInput]: z.output<(typeof RunQueryInput)[K]>;
};

function invalid(message: string, path: string, issue: string): ApiError {
  return new ApiError('VALIDATION', message, { details: { in: 'arguments', issues: [{ path, message: issue }] } });
}

/** The tool's flat arguments as one of the operation's requests, each checked by its own schema. */
function toRequest(input: RunQueryToolInput) {
  const { sql, queryId, period, brandId, dryRun, cursor } = input;
  if (cursor !== undefined) {
    const extra = Object.entries({ sql, queryId, period, brandId, dryRun }).find(([, v]) => v !== undefined);
    if (extra) throw invalid(`send cursor alone: it already names the result (remove ${extra[0]})`, extra[0], 'not allowed with cursor');
    return { page: QueryPageRequestSchema.parse({ cursor }) };
  }
  if ((sql === undefined) === (queryId === undefined)) {
    throw invalid(
      'send exactly one of sql (raw SQL), queryId (a stored query id) or cursor (the next page of a result)',
      sql === undefined ? '(arguments)' : 'queryId',
      sql === undefined ? 'send sql, queryId or cursor' : 'send sql or queryId, not both',
    );
  }
  if (sql !== undefined && period !== undefined) {
    throw invalid('period applies to stored queries only; put the dates into the SQL itself', 'period', 'not allowed with sql');
  }
  const request = Object.fromEntries(Object.entries({ sql, queryId, period, brandId, dryRun }).filter(([, v]) => v !== undefined));
  return { run: RunQueryRequestSchema.parse(request) };
}

function pagingNote(out: RunQueryOutcome['result'], caps: ResultCaps): string | undefined {
  if (!out.truncated) return undefined;
  const limits = `at most ${caps.rows} rows and ${caps.bytes} bytes per run_query result`;
  if (out.nextCursor === null) return `Only ${out.rowCount} of ${out.totalRows} rows are shown (${limits}).`;
  return (
    `Showing ${out.rowCount} of ${out.totalRows} rows (${limits}). Next page: call run_query with only ` +
    `{"cursor": "${out.nextCursor}"}; it reads the stored result (no new run, nothing billed) in the same order, ` +
    'whether or not the SQL has ORDER BY.'
  );
}

/** structuredContent carries the result once; the text block is its compact rendering (header lines + CSV). */
function toolResult(outcome: RunQueryOutcome, caps: ResultCaps): CallToolResult {
  const note = pagingNote(outcome.result, caps);
  const done = toolSuccess(RunQueryOutput, { ...outcome.result, ...(note ? { note } : {}), usage: outcome.budget });
  const data = RunQueryOutput.parse(done.structuredContent);
  return { ...done, content: [{ type: 'text', text: renderResultText(data, outcome.firstRow) }] };
}

export function registerQueryTools(server: McpServer, { ctx }: ToolDeps) {
  const caps = resultCaps(intVar(ctx.env, 'MCP_ROW_CAP'), intVar(ctx.env, 'MCP_MAX_RESULT_BYTES'));
  server.registerTool(
    'run_query',
    {
      title: 'Run query',
      description:
        "Run a read-only query against one brand's warehouse dataset and get rows back. Two ways: " +
        '(A) raw `sql`: list_brands gives the dataset; ' +
        `${TABLE_NAMING} ${TABLE_DISCOVERY} ${STATEMENT_RULE} ` +
        '(B) `queryId` from list_report_queries or list_saved_queries, plus `period` for parameterized queries. ' +
        'Use dryRun: true to validate and see bytes scanned first. Every run counts against a daily usage limit ' +
        'and a per-query byte ceiling; each result says what is left (`usage`). ' +
        `One result holds at most ${caps.rows} rows and ${caps.bytes} bytes (about ${Math.round(caps.bytes / 4 / 1000)}k tokens); ` +
        '`totalRows` is the size of the whole result. ' +
        `${PAGING} Prefer aggregates (GROUP BY, SUM) over raw rows.`,
      inputSchema: RunQueryInput,
      outputSchema: RunQueryOutput,
      // Read-only, but not idempotent: each run spends the daily usage budget.
      annotations: { title: 'Run query', readOnlyHint: true, idempotentHint: false, openWorldHint: false },
    },
    (input) =>
      runTool(ctx, 'run_query', async () => {
        const request = toRequest(input);
        const opts = { rowCap: caps.rows, fitRows: (rows: Record<string, unknown>[]) => rowsThatFit(rows, caps) };
        if (request.page) {
          return toolResult(await readQueryPage(ctx, request.page, opts), caps);
        }
        return toolResult(await runQuery(ctx, request.run, opts), caps);
      }),
  );
}
