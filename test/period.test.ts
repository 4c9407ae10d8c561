import { describe, expect, it } from 'vitest';
import { localEpochDay, parseIsoDate, periodProblem, resolvePeriod } from '../src/features/query/period';

const at = (iso: string) => Date.parse(iso);

describe('resolvePeriod (pure, now injected)', () => {
  it.each([
    ['DAILY', '2026-11-21T10:00:00Z', '2026-11-20', '2026-11-20'],
    ['WEEKLY', '2026-11-21T10:00:00Z', '2026-11-14', '2026-11-20'],
    ['MONTHLY', '2026-11-21T10:00:00Z', '2026-10-01', '2026-10-31'],
    ['MONTHLY', '2026-03-01T00:00:00Z', '2026-02-01', '2026-02-28'],
    ['MONTHLY', '2024-03-15T00:00:00Z', '2024-02-01', '2024-02-29'],
    ['MONTHLY', '2026-01-10T00:00:00Z', '2025-12-01', '2025-12-31'],
    ['DAILY', '2026-01-01T00:30:00Z', '2025-12-31', '2025-12-31'],
  ] as const)('%s at %s is %s..%s (UTC)', (cadence, now, start, end) => {
    expect(resolvePeriod({ cadence }, at(now), null)).toEqual({ startDate: start, endDate: end });
  });

  it('defaults to the last full month', () => {
    expect(resolvePeriod(undefined, at('2026-11-21T10:00:00Z'), null)).toEqual({ startDate: '2026-10-01', endDate: '2026-10-31' });
  });

  it('uses the brand time zone for "today"', () => {
    // 2026-12-01 03:00 UTC is still 2026-11-30 in Los Angeles: yesterday there is the 29th, last month October.
    const now = at('2026-12-01T03:00:00Z');
    expect(localEpochDay(now, 'America/Los_Angeles')).toBe(parseIsoDate('2026-11-30'));
    expect(resolvePeriod({ cadence: 'DAILY' }, now, 'America/Los_Angeles')).toEqual({ startDate: '2026-11-29', endDate: '2026-11-29' });
    expect(resolvePeriod({ cadence: 'MONTHLY' }, now, 'America/Los_Angeles')).toEqual({ startDate: '2026-10-01', endDate: '2026-10-31' });
    expect(resolvePeriod({ cadence: 'MONTHLY' }, now, null)).toEqual({ startDate: '2026-11-01', endDate: '2026-11-30' });
  });

  it('passes explicit dates through', () => {
    expect(resolvePeriod({ startDate: '2026-01-05', endDate: '2026-01-09' }, at('2026-11-21T00:00:00Z'), null)).toEqual({
      startDate: '2026-01-05',
      endDate: '2026-01-09',
    });
  });
});

describe('periodProblem', () => {
  it.each([
    [{ startDate: '2026-02-30', endDate: '2026-03-01' }, /not a calendar date/],
    [{ startDate: '2026-3-1', endDate: '2026-03-02' }, /not a calendar date/],
    [{ startDate: '2026-03-02', endDate: '2026-03-01' }, /on or before/],
    [{ startDate: '2026-03-01' }, /together/],
    [{ endDate: '2026-03-01' }, /together/],
    [{ cadence: 'DAILY' as const, startDate: '2026-03-01', endDate: '2026-03-02' }, /not both/],
    [{ startDate: '2024-01-01', endDate: '2026-01-01' }, /maximum is 400/],
  ])('%j is refused', (p, re) => {
    expect(periodProblem(p)).toMatch(re);
  });
  it.each([
    [{}],
    [{ cadence: 'WEEKLY' as const }],
    [{ startDate: '2026-01-01', endDate: '2026-01-01' }],
    [{ startDate: '2025-01-01', endDate: '2026-02-04' }],
  ])('%j is fine', (p) => expect(periodProblem(p)).toBeNull());
});

describe('extension cadences: LAST_FULL_WEEK (ISO, Monday-Sunday) and LAST_FULL_QUARTER', () => {
  it.each([
    // 2026-11-25 is a Wednesday: the last full week is Mon 16 - Sun 22 (WEEKLY would be Wed 18 - Tue 24).
    ['LAST_FULL_WEEK', '2026-11-25T10:00:00Z', '2026-11-16', '2026-11-22'],
    // On a Monday the week that just ended counts; on a Sunday the current week is not full yet.
    ['LAST_FULL_WEEK', '2026-11-23T00:00:00Z', '2026-11-16', '2026-11-22'],
    ['LAST_FULL_WEEK', '2026-11-22T23:59:59Z', '2026-11-09', '2026-11-15'],
    // Across a year boundary: ISO week 53 of 2026 runs Mon 28 Dec - Sun 3 Jan 2027.
    ['LAST_FULL_WEEK', '2027-01-05T12:00:00Z', '2026-12-28', '2027-01-03'],
    ['LAST_FULL_QUARTER', '2026-11-25T10:00:00Z', '2026-07-01', '2026-09-30'],
    ['LAST_FULL_QUARTER', '2026-10-01T00:00:00Z', '2026-07-01', '2026-09-30'],
    ['LAST_FULL_QUARTER', '2026-09-30T23:00:00Z', '2026-04-01', '2026-06-30'],
    ['LAST_FULL_QUARTER', '2027-02-14T00:00:00Z', '2026-10-01', '2026-12-31'],
    ['LAST_FULL_QUARTER', '2024-05-01T00:00:00Z', '2024-01-01', '2024-03-31'],
  ] as const)('%s at %s is %s..%s (UTC)', (cadence, now, start, end) => {
    expect(resolvePeriod({ cadence }, at(now), null)).toEqual({ startDate: start, endDate: end });
  });

  it("resolves them in the brand's time zone", () => {
    // Monday 2026-11-23 01:00 UTC is still Sunday the 22nd in Los Angeles: that week is not over there yet.
    const now = at('2026-11-23T01:00:00Z');
    expect(resolvePeriod({ cadence: 'LAST_FULL_WEEK' }, now, null)).toEqual({ startDate: '2026-11-16', endDate: '2026-11-22' });
    expect(resolvePeriod({ cadence: 'LAST_FULL_WEEK' }, now, 'America/Los_Angeles')).toEqual({
      startDate: '2026-11-09',
      endDate: '2026-11-15',
    });
    // 2026-12-31 20:00 UTC is already 2027-01-01 in Tokyo: the last full quarter there is Q4 2026.
    const newYear = at('2026-12-31T20:00:00Z');
    expect(resolvePeriod({ cadence: 'LAST_FULL_QUARTER' }, newYear, null)).toEqual({ startDate: '2026-07-01', endDate: '2026-09-30' });
    expect(resolvePeriod({ cadence: 'LAST_FULL_QUARTER' }, newYear, 'Asia/Tokyo')).toEqual({
      startDate: '2026-10-01',
      endDate: '2026-12-31',
    });
  });

  it('WEEKLY stays the rolling 7 days to yesterday (the spec meaning), whatever the weekday', () => {
    expect(resolvePeriod({ cadence: 'WEEKLY' }, at('2026-11-25T10:00:00Z'), null)).toEqual({
      startDate: '2026-11-18',
      endDate: '2026-11-24',
    });
  });
});
