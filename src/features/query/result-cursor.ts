import { z } from 'zod';
import { usageKey, type Principal } from '../../auth/principal';
import { requireSecret, type Env } from '../../env';
import { ApiError } from '../../errors';
import { openCursor, signCursor, type CursorBinding } from '../../http/cursor';
import { ResolvedWindowSchema } from './run-query.schemas';

/**
 * Result cursors: where the next page of a finished query's stored result starts. BigQuery keeps a query's
 * result for about 24 hours and serves any page of it (`jobs.getQueryResults` with `startIndex`) without running
 * or billing anything again, so a cursor names the job, its location, the brand whose service account ran it,
 * and the next row. It is signed with CURSOR_SECRET (src/http/cursor.ts) and bound to the principal, so another
 * key cannot use it, and expires after RESULT_CURSOR_TTL_MS, well before BigQuery drops the result. Pure apart
 * from WebCrypto: `now` is an argument.
 */

/** How long a cursor is honoured: a quarter of the 24 hours BigQuery keeps a result. */
export const RESULT_CURSOR_TTL_MS = 6 * 60 * 60 * 1000;

/** Where the next page starts, as the code reads it. */
export interface ResultPosition {
  /** Brand whose dataset (and service account) the job ran with. */
  brandId: string;
  /** BigQuery's job id and location. */
  jobId: string;
  location: string;
  /** Next row (0-based) and rows in the whole result. */
  offset: number;
  totalRows: number;
  /** Expiry, ms since epoch. */
  expiresAt: number;
  /** The stored query's id and window, echoed on every page. */
  queryId?: string;
  window?: z.infer<typeof ResolvedWindowSchema>;
}

/**
 * The position as signed into the token: one letter a field, kept as it was first issued, so cursors handed out
 * before a deploy keep working and tokens stay short.
 */
const WirePositionSchema = z.strictObject({
  b: z.string().min(1),
  j: z.string().min(1),
  l: z.string(),
  o: z.number().int().nonnegative(),
  n: z.number().int().nonnegative(),
  x: z.number().int(),
  q: z.string().optional(),
  w: ResolvedWindowSchema.optional(),
});
type WirePosition = z.infer<typeof WirePositionSchema>;

/** Each readable field's letter in the token, in the order the payload has always had. */
const WIRE_NAMES = {
  brandId: 'b',
  jobId: 'j',
  location: 'l',
  offset: 'o',
  totalRows: 'n',
  expiresAt: 'x',
  queryId: 'q',
  window: 'w',
} as const satisfies Record<keyof ResultPosition, keyof WirePosition>;

/** Renames the defined fields of `from` through `names` (readable to wire, or back). */
function rename(from: object, names: readonly (readonly [string, string])[]): Record<string, unknown> {
  const values = from as Record<string, unknown>;
  return Object.fromEntries(names.flatMap(([a, b]) => (values[a] === undefined ? [] : [[b, values[a]]])));
}

const toWire = (p: ResultPosition) => rename(p, Object.entries(WIRE_NAMES)) as WirePosition;
const fromWire = (w: WirePosition) =>
  rename(
    w,
    Object.entries(WIRE_NAMES).map(([a, b]) => [b, a] as const),
  ) as unknown as ResultPosition;

function binding(principal: Pick<Principal, 'kind' | 'id'>): CursorBinding {
  return { principal: usageKey(principal), filters: { use: 'query-result' } };
}

/** Signs the position of the next page. Its expiry is set here from `now`, or kept from the first page. */
export async function issueResultCursor(
  env: Env,
  principal: Principal,
  pos: Omit<ResultPosition, 'expiresAt'> & { expiresAt?: number },
  now: number,
): Promise<string> {
  const position: ResultPosition = { ...pos, expiresAt: pos.expiresAt ?? now + RESULT_CURSOR_TTL_MS };
  return signCursor(requireSecret(env, 'CURSOR_SECRET'), binding(principal), toWire(position), now);
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
    pos = fromWire(await openCursor(requireSecret(env, 'CURSOR_SECRET'), token, binding(principal), now, WirePositionSchema));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'VALIDATION') throw refused('not a cursor issued to this key');
    throw err;
  }
  checkPosition(principal, pos, now);
  return pos;
}

/** What every read of a stored result checks, by cursor or straight from its long job: not expired, brand still held. */
export function checkPosition(principal: Principal, pos: Pick<ResultPosition, 'brandId' | 'expiresAt'>, now: number): void {
  if (now > pos.expiresAt) throw refused(`cursor has expired (cursors last ${RESULT_CURSOR_TTL_MS / 3_600_000} hours)`);
  // The key may have lost the brand since (an org key's brand moved): same answer as any foreign cursor.
  if (!principal.brandIds.includes(pos.brandId)) throw refused('not a cursor issued to this key');
}
