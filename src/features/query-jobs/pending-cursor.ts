import { z } from 'zod';
import { usageKey, type Principal } from '../../auth/principal';
import { requireSecret, type Env } from '../../env';
import { openCursor, signCursor, type CursorBinding } from '../../http/cursor';

/**
 * The pending cursor: what a plain `run_query` (a client without tasks) answers when its query outlives the wait.
 * It is a result cursor (src/http/cursor.ts, CURSOR_SECRET, bound to the principal) marked pending by its binding, so a
 * result-page read refuses it and it names only the long job; `run_query` with it polls the job (the rows once done)
 * or, with `cancel`, cancels it. Pure apart from WebCrypto.
 */

const PendingSchema = z.strictObject({
  /** The long job's id (query_jobs.id). */
  p: z.string().min(1),
});

function binding(principal: Pick<Principal, 'kind' | 'id'>): CursorBinding {
  return { principal: usageKey(principal), filters: { use: 'pending-query' } };
}

export async function issuePendingCursor(env: Env, principal: Principal, jobId: string, now: number): Promise<string> {
  return signCursor(requireSecret(env, 'CURSOR_SECRET'), binding(principal), { p: jobId }, now);
}

/**
 * The job a pending cursor names, or null when `token` is not a pending cursor of this principal (then it is read
 * as a result cursor, which refuses what it is not). Its lifetime is the cursor lifetime (24 h); the job's own
 * result lifetime (6 h) is checked when its result is read.
 */
export async function pendingJobOf(env: Env, principal: Principal, token: string, now: number): Promise<string | null> {
  try {
    return (await openCursor(requireSecret(env, 'CURSOR_SECRET'), token, binding(principal), now, PendingSchema)).p;
  } catch {
    return null;
  }
}
