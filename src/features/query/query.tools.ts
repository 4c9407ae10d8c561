import { z } from 'zod';
import { readQueryPage, type RunQueryOutcome } from './run-query';
import { answerFor, cancelLongJob, pollJob, runOrKeepRunning, startLongQuery, type LongAnswer } from '../query-jobs/long-run';
import { issuePendingCursor, pendingJobOf } from '../query-jobs/pending-cursor';
import { pendingView } from '../query-jobs/query-jobs.schemas';
import { argumentsRequest, RunQueryArguments } from './run-query.input';
import { RunQueryResponseSchema } from './run-query.schemas';
import { renderResultText, resultCaps, rowsThatFit, type ResultCaps } from './result-text';
import { invalidArgument, resultSizeMeta, type ToolDeps } from '../../mcp/tool-result';
import { ANNOTATIONS, defineTool, taskReply, toolReply } from '../../mcp/define-tool';
import { jobTaskSource, jobTaskState, taskWaitMs } from '../query-jobs/query-jobs.tasks';
import { viewMeta, VIEWS } from '../../mcp/views';

const UsageOutput = z
  .strictObject({
    runsLimit: z.number().int(),
    runsRemaining: z.number().int(),
    bytesLimit: z.number(),
    bytesRemaining: z.number(),
    resetSeconds: z.number().int(),
    maxBytesBilled: z.number(),
    maxRunningJobs: z.number().int(),
    jobTimeoutMs: z.number().int(),
  })
  .describe(
    "What is left of this key's rolling 24-hour budget after this call, its per-query byte ceiling, and its long-query " +
      'limits (queries running at once, longest duration).',
  );

const RunQueryOutput = RunQueryResponseSchema.extend({
  note: z.string().optional().describe('Present when `truncated` is true: the caps as numbers and how to read the next page (the cursor).'),
  usage: UsageOutput,
});

/** A query still running when the call's wait ended: the pending cursor that polls (or cancels) it. */
const PendingOutput = z.strictObject({
  status: z.enum(['running', 'cancelling']),
  jobId: z.string(),
  brandId: z.string(),
  elapsedMs: z.number().int(),
  bytesProcessed: z.number().nullable(),
  pollAfterMs: z.number().int(),
  nextCursor: z.string(),
  note: z.string(),
});

const RunQueryToolOutput = z.union([RunQueryOutput, PendingOutput]);

/** What the model reads about a cap or a dry run, in words and numbers; the cursor itself is sent once, as nextCursor. */
function resultNote(outcome: RunQueryOutcome, caps: ResultCaps): string | undefined {
  const out = outcome.result;
  if (out.stats?.dryRun) {
    return (
      `Dry run: the query is valid and would process ${out.stats.totalBytesProcessed} bytes (per-query ceiling ` +
      `${outcome.budget.maxBytesBilled} bytes). Nothing ran or was billed.`
    );
  }
  if (!out.truncated) return undefined;
  const shown = `Rows ${outcome.firstRow + 1}-${outcome.firstRow + out.rowCount} of ${out.totalRows}`;
  const limits = `a result holds at most ${caps.rows} rows and ${caps.bytes} bytes`;
  if (out.nextCursor === null) return `${shown} (${limits}).`;
  return (
    `${shown} (${limits}). Next page: run_query with only {"cursor": <nextCursor>}: it reads the stored result in ` +
    'the same order (no new run, nothing billed).'
  );
}

/** structuredContent carries the result once; the text block is its compact rendering (header lines + CSV). */
function toolResult(outcome: RunQueryOutcome, caps: ResultCaps) {
  const note = resultNote(outcome, caps);
  // One parse, rendered once, sent once: the text block is the only copy (the tool's result form is `text`).
  return toolReply(
    RunQueryToolOutput,
    { ...outcome.result, ...(note ? { note } : {}), usage: outcome.budget },
    {
      render: (data) => ('rows' in data ? renderResultText(data, outcome.firstRow) : JSON.stringify(data)),
    },
  );
}

/** A long query's answer: its result, or the pending cursor with how long to wait before polling it. */
async function longResult(deps: ToolDeps, answer: LongAnswer, caps: ResultCaps) {
  if ('done' in answer) return toolResult(answer.done, caps);
  const { ctx } = deps;
  const row = answer.pending;
  const now = Date.now();
  const view = pendingView(row, now);
  const waitS = Math.ceil(view.pollAfterMs / 1000);
  return toolReply(RunQueryToolOutput, {
    ...view,
    nextCursor: await issuePendingCursor(ctx.env, ctx.principal, row.id, ctx.now),
    note:
      view.status === 'cancelling'
        ? 'Cancel sent; the warehouse is stopping the query. Call run_query with only {"cursor": <nextCursor>} to confirm.'
        : `Still running after ${Math.round(view.elapsedMs / 1000)} s. In about ${waitS} s, call run_query with only ` +
          '{"cursor": <nextCursor>}: the rows once done, or "running" again. Add "cancel": true to stop it.',
  });
}

/** Room for what a result carries besides its rows (columns, stats, the paging note). */
export const RESULT_ENVELOPE_CHARS = 16_384;

const capsOf = ({ ctx }: ToolDeps) => resultCaps(ctx.config.MCP_ROW_CAP, ctx.config.MCP_MAX_RESULT_BYTES);

/** This call's caps: the deployment's, with fewer rows when the caller asked (never more than the ceiling). */
function callCaps(deps: ToolDeps, maxRows: number | undefined): ResultCaps {
  const caps = capsOf(deps);
  if (maxRows === undefined) return caps;
  if (maxRows > caps.rows)
    throw invalidArgument(`maxRows is at most ${caps.rows} (the row ceiling of one result)`, 'maxRows', `at most ${caps.rows}`);
  return resultCaps(maxRows, caps.bytes);
}

export const runQueryTool = defineTool({
  name: 'run_query',
  title: 'Run query',
  description: (deps) => {
    const caps = capsOf(deps);
    return (
      "Run one read-only query on one brand's dataset: raw sql (flow A) or a stored queryId (flow B). " +
      `A result is filled with as many rows as fit ${caps.bytes} bytes, at most ${caps.rows} (maxRows for fewer), as ` +
      'JSON: schema, then rows as arrays in schema order; totalRows is the whole result, nextCursor the next page. ' +
      'Each run counts against the daily usage limit and a per-query byte ceiling (what is left comes back in usage). ' +
      `A query still running after ${Math.round(deps.ctx.config.LONG_QUERY_WAIT_MS / 1000)} s answers status "running" with a ` +
      'pending nextCursor: after pollAfterMs, call again with only that cursor for the rows (add cancel: true to stop it).'
    );
  },
  input: RunQueryArguments.shape,
  output: RunQueryToolOutput,
  // Rows reach the model once, as the compact JSON text (no structuredContent copy).
  result: 'text',
  // Read-only, but not idempotent: each run spends the daily usage budget.
  annotations: ANNOTATIONS.meteredRead,
  // The text copy of a capped result is about the row cap's bytes plus columns, stats and the paging note.
  // Hosts with MCP Apps show the result in the result view; others ignore the link and read the result as before.
  meta: ({ ctx }) => ({ ...resultSizeMeta(ctx.config.MCP_MAX_RESULT_BYTES + RESULT_ENVELOPE_CHARS), ...viewMeta(VIEWS.result) }),
  // Long queries as MCP tasks, both eras: the task is the job (query_jobs), its result the first page as above.
  tasks: {
    experimental: true,
    source: (deps) => {
      const caps = capsOf(deps);
      const opts = { rowCap: caps.rows, fitRows: (rows: Record<string, unknown>[]) => rowsThatFit(rows, caps) };
      return jobTaskSource(deps.ctx, opts, (outcome) => toolResult(outcome, caps));
    },
  },
  run: async ({ maxRows, cancel, ...input }, deps) => {
    const { ctx } = deps;
    const caps = callCaps(deps, maxRows);
    const request = argumentsRequest(input);
    const opts = { rowCap: caps.rows, fitRows: (rows: Record<string, unknown>[]) => rowsThatFit(rows, caps) };
    if (request.page) {
      const pending = await pendingJobOf(ctx.env, ctx.principal, request.page.cursor, ctx.now);
      if (pending !== null) {
        const answer = cancel ? await answerFor(ctx, await cancelLongJob(ctx, pending), opts) : await pollJob(ctx, pending, opts);
        return longResult(deps, answer, caps);
      }
      if (cancel) throw invalidArgument('cancel applies to the pending cursor of a running query only', 'cancel', 'needs a pending cursor');
      return toolResult(await readQueryPage(ctx, request.page, opts), caps);
    }
    if (cancel) throw invalidArgument('cancel applies to the pending cursor of a running query only', 'cancel', 'needs a pending cursor');
    if (deps.task && request.run.dryRun !== true) {
      // A client that takes tasks: a query still running after a short wait becomes one (the same durable job).
      // A 2025 client that asked for a task gets it at once, so its job is recorded before it is sent; a 2026 call
      // runs as a plain one and becomes a task only if it outlives the wait.
      const wait = taskWaitMs(deps.task.era, ctx.config.LONG_QUERY_WAIT_MS);
      const answer = wait > 0 ? await runOrKeepRunning(ctx, request.run, wait, opts) : await startLongQuery(ctx, request.run, 0, opts);
      return 'done' in answer ? toolResult(answer.done, caps) : taskReply(jobTaskState(answer.pending, Date.now()));
    }
    // A plain call runs as REST's synchronous run does, waiting LONG_QUERY_WAIT_MS (below the ~60 s some clients cut
    // a tool call at); a query still running then becomes a long query, answered with a pending cursor.
    return longResult(deps, await runOrKeepRunning(ctx, request.run, ctx.config.LONG_QUERY_WAIT_MS, opts), caps);
  },
});
