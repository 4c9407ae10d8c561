import type { Coverage } from '../../schemas/catalog';
import { formatIsoDate, parseIsoDate } from '../query/period';

/**
 * How complete a table's last period is, from its coverage labels and the brand's today: what a model needs to say
 * "November so far, to the 26th" instead of presenting a month or week in progress as a whole one. Pure: the day
 * is an argument (days since epoch in the brand's time zone, localEpochDay), no clock.
 */
export interface Completeness {
  /** The last day that is over and has data: the label's last day, or yesterday when the data reaches today (or later). */
  lastCompleteDay: string | null;
  /** `YYYY-MM` of the month the complete data ends inside of; null when it ends on a month's last day. */
  partialMonth: string | null;
  /** The Monday (`YYYY-MM-DD`) of the ISO week the complete data ends inside of; null when it ends on a Sunday. */
  partialWeek: string | null;
}

const NONE: Completeness = { lastCompleteDay: null, partialMonth: null, partialWeek: null };

/** `coverage`'s completeness on the brand's day `today`; every field null when no day of it is over yet. */
export function completeness(coverage: Coverage, today: number): Completeness {
  const first = parseIsoDate(coverage.firstDay);
  const last = parseIsoDate(coverage.lastDay);
  if (first === null || last === null) return NONE;
  // Today is not over, whatever the label says: the last complete day is yesterday at the latest.
  const end = Math.min(last, today - 1);
  if (end < first) return NONE;
  const day = formatIsoDate(end);
  const endsMonth = formatIsoDate(end + 1).slice(8) === '01';
  // getUTCDay: 0 Sunday .. 6 Saturday; ISO weeks run Monday to Sunday (period.ts's LAST_FULL_WEEK).
  const sinceMonday = (new Date(end * 86_400_000).getUTCDay() + 6) % 7;
  return {
    lastCompleteDay: day,
    partialMonth: endsMonth ? null : day.slice(0, 7),
    partialWeek: sinceMonday === 6 ? null : formatIsoDate(end - sinceMonday),
  };
}
