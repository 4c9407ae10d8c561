// The REST view of a long job: its body and poll headers, and the asynchronous start of POST /v1/data/query.
import type { OpContext } from '../../context';
import type { RunQueryRequest } from '../query/run-query.input';
import type { RunQueryOutcome } from '../query/run-query';
import { jobResult, startLongQuery } from './long-run';
import { isLive, pollAfterMs, type JobRow } from './job-store';
import { jobView, type QueryJob } from './query-jobs.schemas';

/** Where a job is polled: the `Location` of a 202. */
export function jobLocation(id: string): string {
  return `/v1/data/query/jobs/${id}`;
}

/** The REST body of a job, with its result's first page once done, and the headers saying when to poll again. */
export async function restJob(ctx: OpContext, row: JobRow): Promise<{ body: QueryJob; headers: Record<string, string> }> {
  const now = Date.now();
  const pollAfter = isLive(row) ? pollAfterMs(row, now) : null;
  const body = jobView(row, now, pollAfter);
  if (row.status === 'done') {
    const out = await jobResult(ctx, row, {});
    return { body: { ...body, result: out.result }, headers: out.headers };
  }
  return { body, headers: pollAfter === null ? {} : { 'Retry-After': String(Math.ceil(pollAfter / 1000)) } };
}

/** True when the request asks for an asynchronous answer (RFC 7240 `Prefer: respond-async`). */
export function prefersAsync(prefer: string | undefined): boolean {
  return (prefer ?? '').split(',').some((p) => p.split(';')[0]?.trim().toLowerCase() === 'respond-async');
}

/**
 * POST /v1/data/query with `Prefer: respond-async`: the run is checked and admitted as a synchronous one, then
 * answered at once: 202 with the job and its `Location` (a dry run, which runs nothing, is answered as usual).
 */
export async function startAsync(
  ctx: OpContext,
  input: RunQueryRequest,
): Promise<{ done: RunQueryOutcome } | { accepted: QueryJob; headers: Record<string, string> }> {
  const answer = await startLongQuery(ctx, input, 0);
  if ('done' in answer) return { done: answer.done };
  const { body, headers } = await restJob(ctx, answer.pending);
  return { accepted: body, headers: { ...headers, Location: jobLocation(body.jobId), 'Preference-Applied': 'respond-async' } };
}
