import type { OpContext } from '../../context';
import type { TaskAnswer, TaskSource, TaskState } from '../../mcp/tasks';
import type { RunQueryOptions, RunQueryOutcome } from '../query/run-query';
import { isLive, listOwnJobs, pollAfterMs, type JobRow } from './job-store';
import { cancelLongJob, jobError, jobResult, jobStatusOf, waitJob } from './long-run';

/**
 * A long query as an MCP task (src/mcp/tasks.ts): the task id is the job id, and the task is the job's durable
 * record (query_jobs), so a poll served by another isolate, or after a deploy, finds it, and its owner alone does
 * (ownJob: another key or connection gets JOB_NOT_FOUND, as for an id that never existed). Nothing here runs or
 * settles anything itself: get, wait and cancel are the long run's own poll, wait and cancel.
 */

const MB = 1_000_000;

function progressWords(row: JobRow): string {
  return row.bytes_processed === null ? 'no bytes reported yet' : `${(row.bytes_processed / MB).toFixed(1)} MB processed so far`;
}

/** The task state of a job as it stands at `now`. */
export function jobTaskState(row: JobRow, now: number): TaskState {
  const elapsedMs = Math.max(0, (row.ended_at ?? now) - row.created_at);
  const base = {
    taskId: row.id,
    createdAt: row.created_at,
    lastUpdatedAt: row.ended_at ?? now,
    // The result is kept (and the task answerable) for the result cursor lifetime from the start.
    ttlMs: row.result_expires_at - row.created_at,
    progress: { elapsedMs, bytesProcessed: row.bytes_processed },
  };
  const secs = Math.round(elapsedMs / 1000);
  // Cancelled by its owner stays cancelled (SEP-1686), even when BigQuery finished before the cancel took effect.
  if (row.cancel_reason === 'caller') {
    return {
      ...base,
      status: 'cancelled',
      statusMessage: isLive(row)
        ? 'Cancel sent; BigQuery is stopping the query. What it billed before it stopped is counted.'
        : `Cancelled after ${secs} s; ${row.bytes_billed ?? 0} bytes billed before it stopped.`,
    };
  }
  if (isLive(row)) {
    return {
      ...base,
      status: 'working',
      statusMessage: `Running for ${secs} s; ${progressWords(row)}.`,
      pollIntervalMs: pollAfterMs(row, now),
    };
  }
  if (row.status === 'done') {
    return { ...base, status: 'completed', statusMessage: `Done after ${secs} s: ${row.total_rows ?? 'all'} rows.` };
  }
  // Failed or past the key's longest duration: the call's answer is its error result (a tool error, not a JSON-RPC one).
  return { ...base, status: 'completed', toolError: true, statusMessage: `${row.error_code}: ${row.error_message ?? ''}` };
}

/**
 * The job tasks of one request's principal; a finished one answers through `render`, the tool's own rendering of
 * a run's outcome (run_query's result), with its first page read from the stored result (nothing re-run or billed).
 */
export function jobTaskSource<R>(ctx: OpContext, opts: RunQueryOptions, render: (outcome: RunQueryOutcome) => R): TaskSource<R> {
  const answer = (row: JobRow): TaskAnswer<R> => {
    const task = jobTaskState(row, Date.now());
    if (isLive(row)) return { task };
    return {
      task,
      outcome: async () => {
        if (row.status !== 'done') throw jobError(row);
        return render(await jobResult(ctx, row, opts));
      },
    };
  };
  return {
    owns: (id) => id.startsWith('qj_'),
    get: async (id) => answer(await jobStatusOf(ctx, id)),
    wait: async (id, ms) => void (await waitJob(ctx, id, ms)),
    cancel: async (id) => answer(await cancelLongJob(ctx, id)),
    async list(cursor) {
      const PAGE = 50;
      const offset = cursor !== undefined && /^\d{1,9}$/.test(cursor) ? Number(cursor) : 0;
      const rows = await listOwnJobs(ctx.env, ctx.principal, offset, PAGE + 1);
      const now = Date.now();
      return {
        tasks: rows.slice(0, PAGE).map((r) => jobTaskState(r, now)),
        ...(rows.length > PAGE ? { nextCursor: String(offset + PAGE) } : {}),
      };
    },
  };
}

/**
 * How long a call whose client takes 2026 tasks waits before answering with one: a query done by then answers
 * as always; longer ones become tasks at once rather than holding the call for LONG_QUERY_WAIT_MS.
 */
export const TASK_WAIT_MS = 2_000;

/** The wait of a call that may become a task: 0 for a 2025 client that asked for one, else TASK_WAIT_MS (at most the plain wait). */
export function taskWaitMs(era: 'extension' | 'experimental', longQueryWaitMs: number): number {
  return era === 'experimental' ? 0 : Math.min(TASK_WAIT_MS, longQueryWaitMs);
}
