import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { randomHex } from '../lib/ids';
import { takeToken, type MeterKind, type MeterOutcome, type MeterState } from './meter';
import {
  bucketExpiry,
  bucketStart,
  checkRun,
  isLive,
  rateLimitState,
  usageAt,
  type Bucket,
  type Budget,
  type RateLimitState,
  type Refusal,
  type WindowUsage,
} from './window';

/**
 * Answer of `UsageLimiter.acquire`: `refusal` set when the run is refused, else `ticketId` set when it was counted.
 * Plain data (one object type, not a union, so the RPC stub's typing keeps it): an ApiError would lose its class
 * crossing the RPC boundary, so the Worker side builds the error.
 */
export interface AcquireOutcome {
  refusal: Refusal | null;
  ticketId: string | null;
  rate: RateLimitState;
  /** Runs and bytes in the window after this call (this run counted with its reservation; settled later). */
  used: WindowUsage;
}

/** Answer of `UsageLimiter.peek`: the window as the admin UI shows it. */
export interface UsagePeek {
  used: WindowUsage;
  rate: RateLimitState;
  /** Set when a run would be refused now. */
  refusal: Refusal | null;
}

/**
 * Stored records (SQLite, one database per principal):
 *
 * - `buckets(start, runs, bytes)`: runs acquired and bytes billed per one-minute bucket `[start, start + 60 s)`,
 *   `start` in ms since epoch. Rows leave once every run in them is 24 h old, so there are at most 1441.
 * - `tickets(id, bucket, reserved)`: runs acquired and not yet settled, with the bucket their bytes are added to
 *   and the bytes reserved for them at admission (already in the bucket's `bytes`). A settle replaces the
 *   reservation with the bytes billed and deletes its ticket, which is what makes a second settle of the same run
 *   a no-op. Tickets of runs that never settle (the Worker died mid-run) keep their reservation counted and leave
 *   with their bucket, so the table is bounded by the runs in the window.
 *
 * An alarm set 24 h + 1 min after the newest bucket empties both tables once the principal has been idle for a
 * whole window, so an idle principal costs no storage.
 */
export class UsageLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The `buckets` table mirrored in memory, so a check sums at most 1441 numbers without touching SQLite. */
  private readonly buckets = new Map<number, Bucket>();
  private newestStart = -Infinity;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS buckets (
      start INTEGER PRIMARY KEY,
      runs  INTEGER NOT NULL,
      bytes INTEGER NOT NULL
    )`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS tickets (
      id       TEXT PRIMARY KEY,
      bucket   INTEGER NOT NULL,
      reserved INTEGER NOT NULL DEFAULT 0
    )`);
    // Objects created before reservations have the two-column table; their open tickets reserved nothing.
    const ticketColumns = this.sql.exec<{ name: string }>('PRAGMA table_info(tickets)').toArray();
    if (!ticketColumns.some((c) => c.name === 'reserved')) {
      this.sql.exec('ALTER TABLE tickets ADD COLUMN reserved INTEGER NOT NULL DEFAULT 0');
    }
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meters (
      kind    TEXT PRIMARY KEY,
      tokens  REAL NOT NULL,
      updated INTEGER NOT NULL
    )`);
    for (const row of this.sql.exec<{ start: number; runs: number; bytes: number }>('SELECT start, runs, bytes FROM buckets')) {
      this.buckets.set(row.start, { start: row.start, runs: row.runs, bytes: row.bytes });
      if (row.start > this.newestStart) this.newestStart = row.start;
    }
  }

  /**
   * Checks the budget at `now` and, when `consume` is true and the run is allowed, counts it, adds
   * `reserveBytes` (the most the run can bill) to the window's bytes at once, and returns a ticket id for `settle`.
   * Reserving at admission is what bounds a burst: concurrent runs see each other's possible bytes, so the runs
   * let in can exceed the byte budget by at most the last one's reservation. Synchronous from start to end (no
   * await), so concurrent calls cannot interleave and the count is exact; the SQLite writes and the alarm are
   * committed together before the answer leaves the object.
   */
  acquire(budget: Budget, now: number, consume: boolean, reserveBytes = 0): AcquireOutcome {
    assertBudget(budget);
    assertTime(now);
    assertBytes(reserveBytes, 'reserveBytes');
    this.prune(now);
    const buckets = [...this.buckets.values()];
    // One pass over the window per call: the sums are reused by the refusal check and the RateLimit state.
    const used = usageAt(buckets, now);
    const refusal = checkRun(buckets, budget, now, used);
    if (refusal) return { refusal, ticketId: null, rate: rateLimitState(buckets, budget, now, used), used };
    if (!consume) return { refusal: null, ticketId: null, rate: rateLimitState(buckets, budget, now, used), used };

    const start = bucketStart(now);
    const bucket = this.buckets.get(start) ?? { start, runs: 0, bytes: 0 };
    bucket.runs += 1;
    bucket.bytes += reserveBytes;
    this.buckets.set(start, bucket);
    this.sql.exec(
      'INSERT INTO buckets (start, runs, bytes) VALUES (?, 1, ?) ' +
        'ON CONFLICT (start) DO UPDATE SET runs = runs + 1, bytes = bytes + excluded.bytes',
      start,
      reserveBytes,
    );
    const ticketId = randomHex(16);
    this.sql.exec('INSERT INTO tickets (id, bucket, reserved) VALUES (?, ?, ?)', ticketId, start, reserveBytes);
    const after = [...this.buckets.values()];
    const usedAfter = { runs: used.runs + 1, bytes: used.bytes + reserveBytes };
    const rate = rateLimitState(after, budget, now, usedAfter);

    if (start > this.newestStart) {
      this.newestStart = start;
      // Relative to the platform clock: callers' `now` may be injected (tests), the alarm runs on real time.
      // Not awaited: on SQLite-backed objects the write is applied at once and the output gate holds the answer
      // until it is durable (a failed write breaks the object, so nothing is acknowledged unrecorded).
      void this.ctx.storage.setAlarm(Date.now() + (bucketExpiry(start) - now));
    }
    return { refusal: null, ticketId, rate, used: usedAfter };
  }

  /**
   * Replaces the reservation of the run of `ticketId` with the bytes it billed, in the bucket it was acquired in
   * (the difference may be negative: most runs bill less than they could). Returns false, changing nothing, when
   * the ticket is unknown, already settled, or its bucket has left the window.
   */
  settle(ticketId: string, bytesBilled: number): boolean {
    assertBytes(bytesBilled, 'bytesBilled');
    const row = this.sql
      .exec<{ bucket: number; reserved: number }>('SELECT bucket, reserved FROM tickets WHERE id = ?', ticketId)
      .toArray()[0];
    if (!row) return false;
    this.sql.exec('DELETE FROM tickets WHERE id = ?', ticketId);
    const bucket = this.buckets.get(row.bucket);
    if (!bucket) return false;
    const delta = bytesBilled - row.reserved;
    if (delta !== 0) {
      bucket.bytes += delta;
      this.sql.exec('UPDATE buckets SET bytes = bytes + ? WHERE start = ?', delta, row.bucket);
    }
    return true;
  }

  /**
   * Takes one token from the principal's `kind` meter (dry runs and guard refusals, or cursor page reads): a
   * bucket of `perMinute` tokens refilled at `perMinute` a minute. Synchronous, like `acquire`.
   */
  meter(kind: MeterKind, perMinute: number, budget: Budget, now: number): MeterOutcome & { rate: RateLimitState; used: WindowUsage } {
    assertBudget(budget);
    assertTime(now);
    this.prune(now);
    const buckets = [...this.buckets.values()];
    const row = this.sql.exec<{ tokens: number; updated: number }>('SELECT tokens, updated FROM meters WHERE kind = ?', kind).toArray()[0];
    const prev: MeterState | undefined = row ? { tokens: row.tokens, updated: row.updated } : undefined;
    const out = takeToken(prev, perMinute, now);
    this.sql.exec(
      'INSERT INTO meters (kind, tokens, updated) VALUES (?, ?, ?) ' +
        'ON CONFLICT (kind) DO UPDATE SET tokens = excluded.tokens, updated = excluded.updated',
      kind,
      out.state.tokens,
      out.state.updated,
    );
    const used = usageAt(buckets, now);
    return { ...out, rate: rateLimitState(buckets, budget, now, used), used };
  }

  /** The window at `now` without counting anything. */
  peek(budget: Budget, now: number): UsagePeek {
    assertBudget(budget);
    assertTime(now);
    const buckets = [...this.buckets.values()];
    const used = usageAt(buckets, now);
    return { used, rate: rateLimitState(buckets, budget, now, used), refusal: checkRun(buckets, budget, now, used) };
  }

  /** Fires a full window after the newest bucket: every bucket has expired, so the principal's storage is emptied. */
  override alarm(): void {
    this.sql.exec('DELETE FROM buckets');
    this.sql.exec('DELETE FROM tickets');
    // A meter idle for a day is full again; dropping its row changes nothing.
    this.sql.exec('DELETE FROM meters');
    this.buckets.clear();
    this.newestStart = -Infinity;
  }

  /** Drops buckets that left the window at `now`, with their unsettled tickets. */
  private prune(now: number): void {
    for (const b of this.buckets.values()) {
      if (isLive(b, now)) continue;
      this.buckets.delete(b.start);
      this.sql.exec('DELETE FROM buckets WHERE start = ?', b.start);
      this.sql.exec('DELETE FROM tickets WHERE bucket = ?', b.start);
    }
  }
}

/** Budgets come from our own Principal, but a NaN would silently disable a limit, so the object refuses it. */
function assertBudget(budget: Budget): void {
  if (!Number.isSafeInteger(budget.runs) || !Number.isSafeInteger(budget.bytes)) {
    throw new RangeError(`usage budget must be integers, got runs=${budget.runs} bytes=${budget.bytes}`);
  }
}

function assertBytes(bytes: number, name: string): void {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`${name} must be a non-negative integer, got ${bytes}`);
}

function assertTime(now: number): void {
  if (!Number.isSafeInteger(now) || now < 0) throw new RangeError(`now must be ms since epoch, got ${now}`);
}
