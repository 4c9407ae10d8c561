/**
 * Date windows for stored queries. Pure: takes `now` and the brand's time zone, does no I/O.
 *
 * Rules (documented in docs/run-query.md):
 * - "today" is the calendar date at `now` in the brand's IANA time zone, or UTC when the brand has none.
 * - DAILY = yesterday; WEEKLY = the rolling 7 days to yesterday (not a calendar week); MONTHLY = the last full
 *   calendar month. Extensions: LAST_FULL_WEEK = the last full ISO week, Monday to Sunday, before the current one;
 *   LAST_FULL_QUARTER = the last full calendar quarter (Jan-Mar, Apr-Jun, Jul-Sep, Oct-Dec) before the current one.
 * - startDate + endDate: both real calendar dates, start <= end, at most MAX_PERIOD_DAYS days inclusive.
 * - no period: MONTHLY.
 */
/** The spec's three cadences, then the extensions (optional values callers may send). */
export const CADENCES = ['DAILY', 'WEEKLY', 'MONTHLY', 'LAST_FULL_WEEK', 'LAST_FULL_QUARTER'] as const;
export type Cadence = (typeof CADENCES)[number];

/** One description of every cadence, shared by the REST document and the MCP tools so they cannot drift. */
export const CADENCE_DESCRIPTION =
  'DAILY = yesterday; WEEKLY = the rolling 7 days to yesterday (not a calendar week); MONTHLY = the last full ' +
  'calendar month; LAST_FULL_WEEK (extension) = the last full week, Monday to Sunday (ISO); LAST_FULL_QUARTER ' +
  '(extension) = the last full calendar quarter.';

interface PeriodInput {
  cadence?: Cadence;
  startDate?: string;
  endDate?: string;
}

export interface ResolvedPeriod {
  startDate: string;
  endDate: string;
}

/** Longest explicit window, inclusive: a little over a year, enough for year-over-year comparisons. */
export const MAX_PERIOD_DAYS = 400;

const DAY_MS = 86_400_000;

/** Parses `YYYY-MM-DD` as a real calendar date (rejects 2026-02-30); returns days since epoch or null. */
export function parseIsoDate(s: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t / DAY_MS;
}

export function formatIsoDate(epochDay: number): string {
  return new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
}

/** The calendar date at `now` in `timeZone` (UTC when null), as days since epoch. */
export function localEpochDay(now: number, timeZone: string | null): number {
  if (!timeZone) return Math.floor(now / DAY_MS);
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(now));
  const day = parseIsoDate(parts);
  if (day === null) throw new Error(`cannot read the date in time zone ${timeZone}: ${parts}`);
  return day;
}

/** Why an explicit window is invalid, or null when it is fine. */
export function periodProblem(p: PeriodInput): string | null {
  const hasStart = p.startDate !== undefined;
  const hasEnd = p.endDate !== undefined;
  if (p.cadence !== undefined && (hasStart || hasEnd)) return 'send either period.cadence or period.startDate + period.endDate, not both';
  if (hasStart !== hasEnd) return 'period.startDate and period.endDate must be sent together';
  if (!hasStart) return null;
  const s = parseIsoDate(p.startDate!);
  const e = parseIsoDate(p.endDate!);
  if (s === null) return `period.startDate ${JSON.stringify(p.startDate)} is not a calendar date (YYYY-MM-DD)`;
  if (e === null) return `period.endDate ${JSON.stringify(p.endDate)} is not a calendar date (YYYY-MM-DD)`;
  if (s > e) return 'period.startDate must be on or before period.endDate';
  if (e - s + 1 > MAX_PERIOD_DAYS) return `period spans ${e - s + 1} days; the maximum is ${MAX_PERIOD_DAYS}`;
  return null;
}

/** Resolves a period (already checked with `periodProblem`) to concrete inclusive dates. */
export function resolvePeriod(p: PeriodInput | undefined, now: number, timeZone: string | null): ResolvedPeriod {
  if (p?.startDate !== undefined && p.endDate !== undefined) return { startDate: p.startDate, endDate: p.endDate };
  const today = localEpochDay(now, timeZone);
  const yesterday = today - 1;
  switch (p?.cadence ?? 'MONTHLY') {
    case 'DAILY':
      return { startDate: formatIsoDate(yesterday), endDate: formatIsoDate(yesterday) };
    case 'WEEKLY':
      return { startDate: formatIsoDate(yesterday - 6), endDate: formatIsoDate(yesterday) };
    case 'MONTHLY':
      return lastFullMonths(today, 1);
    case 'LAST_FULL_WEEK': {
      // getUTCDay: 0 Sunday .. 6 Saturday; ISO weeks start on Monday.
      const sinceMonday = (new Date(today * DAY_MS).getUTCDay() + 6) % 7;
      const thisMonday = today - sinceMonday;
      return { startDate: formatIsoDate(thisMonday - 7), endDate: formatIsoDate(thisMonday - 1) };
    }
    case 'LAST_FULL_QUARTER':
      return lastFullMonths(today, 3);
  }
}

/**
 * The last full block of `months` calendar months before the one `today` falls in, blocks aligned on January
 * (1: the last full month; 3: the last full quarter).
 */
function lastFullMonths(today: number, months: 1 | 3): ResolvedPeriod {
  const t = new Date(today * DAY_MS);
  const blockStartMonth = t.getUTCMonth() - (t.getUTCMonth() % months);
  const firstOfThisBlock = Date.UTC(t.getUTCFullYear(), blockStartMonth, 1) / DAY_MS;
  // Date.UTC normalises a negative month into the previous year.
  const firstOfPrevBlock = Date.UTC(t.getUTCFullYear(), blockStartMonth - months, 1) / DAY_MS;
  return { startDate: formatIsoDate(firstOfPrevBlock), endDate: formatIsoDate(firstOfThisBlock - 1) };
}
