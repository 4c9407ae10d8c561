import { z } from 'zod';
import { usageKey } from '../../auth/principal';
import type { OpContext } from '../../context';
import { requireSecret } from '../../env';
import { ApiError } from '../../errors';
import { openCursor, signCursor, type CursorBinding } from '../../http/cursor';
import type { TaskSource, TaskState } from '../../mcp/tasks';
import { isLive, jobsOfRequest, type JobRow } from '../query-jobs/job-store';
import { cancelLongJob, jobStatusOf, waitJob } from '../query-jobs/long-run';
import { jobTaskState } from '../query-jobs/query-jobs.tasks';

/**
 * show_report as an MCP task (2026-07-28 extension only): a report's sections run as long queries, one job each,
 * started by one request, so the task is named by a handle signed for its principal (CURSOR_SECRET) that names the
 * report, its brand and period, that request, and the sections that failed before they became jobs. Its state is
 * its section jobs' durable records; no record of its own. 2025 clients are not offered it: SEP-1686's tasks/list
 * must list every task, and this one has no row of its own to list.
 */

const PREFIX = 'rt_';

const HandleSchema = z.strictObject({
  /** Report, brand, the caller's period argument as sent (JSON) or null, and the request that started the sections. */
  r: z.string(),
  b: z.string(),
  p: z.string().nullable(),
  q: z.string(),
  /** Sections that failed before they ran, by query id: code and message. */
  e: z.record(z.string(), z.tuple([z.string(), z.string()])),
});
export type ReportHandle = z.infer<typeof HandleSchema>;

function binding(ctx: OpContext): CursorBinding {
  return { principal: usageKey(ctx.principal), filters: { use: 'report-task' } };
}

export async function issueReportHandle(ctx: OpContext, handle: ReportHandle): Promise<string> {
  return PREFIX + (await signCursor(requireSecret(ctx.env, 'CURSOR_SECRET'), binding(ctx), handle, ctx.now));
}

async function openHandle(ctx: OpContext, taskId: string): Promise<ReportHandle> {
  try {
    return await openCursor(requireSecret(ctx.env, 'CURSOR_SECRET'), taskId.slice(PREFIX.length), binding(ctx), ctx.now, HandleSchema);
  } catch {
    // Another principal's handle, a forged or expired one: the same not-found as an id that never existed.
    throw new ApiError('JOB_NOT_FOUND', 'no report task with this id for these credentials (tasks are readable by their owner only)');
  }
}

/** A report's task state from its section jobs: working while any runs; its progress summed over them. */
export function reportTaskState(taskId: string, jobs: readonly JobRow[], now: number): TaskState {
  const states = jobs.map((j) => jobTaskState(j, now));
  const live = jobs.filter((j) => isLive(j)).length;
  const createdAt = Math.min(...states.map((s) => s.createdAt));
  const bytes = jobs.reduce((sum, j) => sum + (j.bytes_processed ?? 0), 0);
  const elapsedMs = Math.max(...states.map((s) => s.progress.elapsedMs));
  const base = {
    taskId,
    createdAt,
    lastUpdatedAt: Math.max(...states.map((s) => s.lastUpdatedAt)),
    ttlMs: Math.min(...states.map((s) => (s.ttlMs === null ? Infinity : s.createdAt + s.ttlMs))) - createdAt,
    progress: { elapsedMs, bytesProcessed: bytes },
  };
  if (live > 0) {
    const polls = states.flatMap((s) => (s.pollIntervalMs === undefined ? [] : [s.pollIntervalMs]));
    return {
      ...base,
      status: 'working',
      statusMessage:
        `${live} of ${jobs.length} sections still running after ${Math.round(elapsedMs / 1000)} s; ` + `${bytes} bytes processed so far.`,
      ...(polls.length > 0 ? { pollIntervalMs: Math.min(...polls) } : {}),
    };
  }
  if (states.every((s) => s.status === 'cancelled')) return { ...base, status: 'cancelled', statusMessage: 'Cancelled by its owner.' };
  return { ...base, status: 'completed', statusMessage: `All ${jobs.length} sections ended.` };
}

/**
 * The report tasks of one request's principal. `render` builds show_report's answer from the handle and the
 * sections' jobs once all ended (their results read from BigQuery's stored results: nothing re-run or billed).
 */
export function reportTaskSource<R>(ctx: OpContext, render: (handle: ReportHandle, jobs: JobRow[]) => Promise<R>): TaskSource<R> {
  const jobsOf = async (taskId: string) => {
    const handle = await openHandle(ctx, taskId);
    const rows = await jobsOfRequest(ctx.env, ctx.principal, handle.q);
    // Advanced as a poll of each would (ownership checked again by jobStatusOf).
    return { handle, jobs: await Promise.all(rows.map((r) => (isLive(r) ? jobStatusOf(ctx, r.id) : r))) };
  };
  const answer = ({ handle, jobs }: { handle: ReportHandle; jobs: JobRow[] }, taskId: string) => {
    const task = reportTaskState(taskId, jobs, Date.now());
    return task.status === 'working' || task.status === 'cancelled' ? { task } : { task, outcome: () => render(handle, jobs) };
  };
  return {
    owns: (id) => id.startsWith(PREFIX),
    get: async (id) => answer(await jobsOf(id), id),
    async wait(id, ms) {
      const live = (await jobsOf(id)).jobs.find((j) => isLive(j));
      if (live) await waitJob(ctx, live.id, ms);
    },
    async cancel(id) {
      const { handle, jobs } = await jobsOf(id);
      const now = await Promise.all(jobs.map((j) => (isLive(j) ? cancelLongJob(ctx, j.id) : j)));
      return answer({ handle, jobs: now }, id);
    },
  };
}
