import { z } from 'zod';
import { usageKey, type Principal } from '../../auth/principal';
import { requireSecret, type Env } from '../../env';
import { ApiError } from '../../errors';
import { openCursor, signCursor, type CursorBinding } from '../../lib/cursor';
import { ResolvedWindowSchema } from './run-query.schemas';

/**
 * Result cursors: where the next page of a finished query's stored result starts. BigQuery keeps a query's
 * result for about 24 hours and serves any page of it (`jobs.getQueryResults` with `startIndex`) without running
 * or billing anything again, so a cursor names the job, its location, the brand whose service account ran it,
 * and the next row. It is signed with CURSOR_SECRET (src/lib/cursor.ts) and bound to the principal, so another
 * key cannot use it, and expires after RESULT_CURSOR_TTL_MS, well before BigQuery drops the result. Pure apart
 * from WebCrypto: `now` is an argument.
 */

/** How long a cursor is honoured: a quarter of the 24 hours BigQuery keeps a result. */
export const RESULT_CURSOR_TTL_MS = 6 * 60 * 60 * 1000;

const PositionSchema = z.strictObject({
  /** Brand whose dataset (and service account) the job ran with. */
  b: z.string().min(1),
  /** Job id and location. */
  j: z.string().min(1),
  l: z.string(),
  /** Next row (0-based) and rows in the whole result. */
  o: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  /** Expiry, ms since epoch. */
  x: z.number().int(),
  /** The stored query's id and window, echoed on every page. */
  q: z.string().optional(),
  w: ResolvedWindowSchema.optional(),
});

export type ResultPosition = z.infer<typeof PositionSchema>;

function binding(principal: Pick<Principal, 'kind' | 'id'>): CursorBinding {
  return { principal: usageKey(principal), filters: { use: 'query-result' } };
}

/** Signs the position of the next page. `pos.x` (expiry) is set here from `now`, or kept from the first page. */
export async function issueResultCursor(
  env: Env,
  principal: Principal,
  pos: Omit<ResultPosition, 'x'> & { x?: number },
  now: number,
): Promise<string> {
  const position: ResultPosition = { ...pos, x: pos.x ?? now + RESULT_CURSOR_TTL_MS };
  return signCursor(requireSecret(env, 'CURSOR_SECRET'), binding(principal), position, now);
}

function refused(message: string): ApiError {
  return new ApiError(
    'VALIDATION',
    `invalid cursor: ${message}; pass nextCursor back unchanged with the key that ran the query, or run the query again`,
    {
      details: { in: 'body', issues: [{ path: 'cursor', message }] },
    },
  );
}

/**
 * Verifies a cursor for this principal and returns its position. Forged, edited, another key's, or expired
 * cursors are 400 VALIDATION naming `cursor`; the message says nothing about the job or its brand.
 */
export async function openResultCursor(env: Env, principal: Principal, token: string, now: number): Promise<ResultPosition> {
  let pos: ResultPosition;
  try {
    pos = await openCursor(requireSecret(env, 'CURSOR_SECRET'), token, binding(principal), now, PositionSchema);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION') throw refused('not a cursor issued to this key');
    throw err;
  }
  if (now > pos.x) throw refused(`cursor has expired (cursors last ${RESULT_CURSOR_TTL_MS / 3_600_000} hours)`);
  // The key may have lost the brand since (an org key's brand moved): same answer as any foreign cursor.
  if (!principal.brandIds.includes(pos.b)) throw refused('not a cursor issued to this key');
  return pos;
}
