// The views' pure cores (views/lib/format.ts, views/lib/chart-data.ts), bundled from their TypeScript: how each
// BigQuery type is shown, how cells sort, which result gets which chart and what its summary says.
import { describe, expect, it } from 'vitest';
import { importWorkerModules } from '../../scripts/lib/import-ts.mjs';

const m = await importWorkerModules({
  'views/lib/format.ts': ['kindOfType', 'columnsOf', 'formatterFor', 'sortRows', 'labelOf'],
  'views/lib/chart-data.ts': ['inferChart', 'chartFromSpec', 'summarize', 'MAX_BARS', 'MAX_SLICES'],
});

const col = (name, type) => ({ name, type, kind: m.kindOfType(type) });

describe('cell formatting by BigQuery type', () => {
  it('formats numbers, exact decimals, dates, timestamps, booleans, nulls and records', () => {
    const f = m.formatterFor('en-US');
    expect(f.cell(1234567, col('n', 'INTEGER'))).toBe('1,234,567');
    expect(f.cell(1234.5, col('x', 'FLOAT'))).toBe('1,234.50');
    expect(f.cell(0.001234, col('x', 'FLOAT64'))).toBe('0.00123');
    // NUMERIC and INT64 beyond 2^53 arrive as strings: every digit is kept.
    expect(f.cell('12345678901234567890.125', col('x', 'NUMERIC'))).toBe('12,345,678,901,234,567,890.125');
    expect(f.cell('9007199254740993', col('x', 'INT64'))).toBe('9,007,199,254,740,993');
    expect(f.cell('NaN', col('x', 'FLOAT64'))).toBe('NaN');
    expect(f.cell('2026-10-05', col('d', 'DATE'))).toBe('Oct 5, 2026');
    expect(f.cell('2026-10-05T13:04:00Z', col('t', 'TIMESTAMP'))).toBe('Oct 5, 2026, 1:04 PM UTC');
    expect(f.cell(true, col('b', 'BOOLEAN'))).toBe('true');
    expect(f.cell(null, col('n', 'INTEGER'))).toBe('null');
    expect(f.cell({ a: 1 }, col('r', 'RECORD'))).toBe('{"a":1}');
    expect(f.compact(549306.38)).toBe('549.3K');
  });

  it('reads column kinds from values when there is no schema', () => {
    const cols = m.columnsOf([
      { day: '2026-10-01', n: 3, name: 'a', ok: true },
      { day: '2026-10-02', n: null, name: 'b', ok: false },
    ]);
    expect(cols.map((c) => c.kind)).toEqual(['date', 'number', 'text', 'bool']);
  });

  it('sorts by kind, nulls last in both directions, stable for ties', () => {
    const rows = [{ v: '10' }, { v: null }, { v: '9' }, { v: 9 }];
    const c = col('v', 'NUMERIC');
    expect(m.sortRows(rows, c, 'ascending').map((r) => r.v)).toEqual(['9', 9, '10', null]);
    expect(m.sortRows(rows, c, 'descending').map((r) => r.v)).toEqual(['10', '9', 9, null]);
  });

  it('labels columns for people', () => {
    expect(m.labelOf('avg_unit_price')).toBe('Avg unit price');
    expect(m.labelOf('aov')).toBe('AOV');
  });
});

describe('which chart a result gets', () => {
  const f = () => m.formatterFor('en-US');
  const daily = [
    { day: '2026-10-01', revenue: 10, orders: 1 },
    { day: '2026-10-02', revenue: null, orders: 3 },
    { day: '2026-10-03', revenue: 30, orders: 2 },
  ];
  const dailyCols = [col('day', 'DATE'), col('revenue', 'FLOAT'), col('orders', 'INTEGER')];

  it('one date column and numbers: lines, one per measure; a category: bars; anything else: none', () => {
    const line = m.inferChart(daily, dailyCols, f());
    expect(line.type).toBe('line');
    expect(line.series.map((s) => s.column.name)).toEqual(['revenue', 'orders']);
    const bars = m.inferChart([{ channel: 'web', n: 1 }], [col('channel', 'STRING'), col('n', 'INTEGER')], f());
    expect(bars.type).toBe('bar');
    expect(m.inferChart([{ a: 'x', b: 'y', n: 1 }], [col('a', 'STRING'), col('b', 'STRING'), col('n', 'INTEGER')], f())).toBeNull();
    expect(m.inferChart([{ a: 'x', ok: true, n: 1 }], [col('a', 'STRING'), col('ok', 'BOOL'), col('n', 'INTEGER')], f())).toBeNull();
    expect(m.inferChart([{ a: 'x' }], [col('a', 'STRING')], f())).toBeNull();
  });

  it('follows a chartSpec, and draws nothing for an unknown spec or a column the rows lack', () => {
    expect(m.chartFromSpec({ type: 'line', x: 'day', y: ['orders'] }, daily, dailyCols, f()).series).toHaveLength(1);
    expect(m.chartFromSpec({ type: 'radar', x: 'day', y: 'orders' }, daily, dailyCols, f())).toBeNull();
    expect(m.chartFromSpec({ type: 'bar', x: 'day', y: 'missing' }, daily, dailyCols, f())).toBeNull();
    expect(m.chartFromSpec(null, daily, dailyCols, f())).toBeNull();
  });

  it('summarises highest, lowest and total, skipping nulls (never counted as zero)', () => {
    const [revenue, orders] = m.summarize(m.inferChart(daily, dailyCols, f()), f());
    expect(revenue).toBe('Revenue: highest 30 on Oct 3, 2026, lowest 10 on Oct 1, 2026, total 40 over 2 day values.');
    expect(orders).toBe('Orders: highest 3 on Oct 2, 2026, lowest 1 on Oct 1, 2026, total 6 over 3 day values.');
  });

  it('says when bars or slices were folded, never silently', () => {
    const many = Array.from({ length: m.MAX_BARS + 5 }, (_, i) => ({ c: `c${i}`, n: i + 1 }));
    const cols = [col('c', 'STRING'), col('n', 'INTEGER')];
    const bars = m.inferChart(many, cols, f());
    expect(bars.series[0].points).toHaveLength(m.MAX_BARS);
    expect(m.summarize(bars, f()).at(-1)).toBe(
      `The chart draws the first ${m.MAX_BARS} of ${m.MAX_BARS + 5} rows; the table lists them all.`,
    );
    const pie = m.chartFromSpec({ type: 'pie', label: 'c', value: 'n' }, many.slice(0, 10), cols, f());
    expect(pie.slices).toHaveLength(m.MAX_SLICES);
    expect(pie.slices.at(-1).label).toBe('Other (3)');
    expect(pie.slices.at(-1).value).toBe(1 + 2 + 3);
  });
});
