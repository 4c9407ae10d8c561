import { ChartSpecSchema, type Row } from './contract';
import { type Column, type Formatter, labelOf, numericValue } from './format';

// Pure chart models: which chart a result gets, the points it draws, and the sentence that says what it shows
// (every chart has a text summary beside it, for people who cannot see the drawing and for a quick read).

export interface Point {
  label: string;
  /** The dimension's raw cell (a date string, a category), for ordering and summaries. */
  key: unknown;
  value: number | null;
}

export interface Series {
  column: Column;
  points: Point[];
}

export type ChartModel =
  | { type: 'bar' | 'line'; x: Column; series: Series[]; shown: number; total: number }
  | { type: 'pie'; label: Column; value: Column; slices: Point[]; shown: number; total: number };

/** Most bars one chart draws; the caption says when rows were left out of the drawing (the table has them all). */
export const MAX_BARS = 40;
/** Most pie slices; smaller ones are summed into one "Other" slice that says how many it holds. */
export const MAX_SLICES = 8;

const isDimension = (c: Column) => c.kind === 'date' || c.kind === 'timestamp' || c.kind === 'text';

/**
 * The chart a plain result can be switched to: exactly one date or category column and one or more numeric
 * columns, nothing else. Dates draw lines, categories bars. Anything else: null (the table only).
 */
export function inferChart(rows: readonly Row[], columns: readonly Column[], fmt: Formatter): ChartModel | null {
  const dims = columns.filter(isDimension);
  const measures = columns.filter((c) => c.kind === 'number');
  const dim = dims[0];
  if (dims.length !== 1 || !dim || measures.length === 0 || dims.length + measures.length !== columns.length) return null;
  return axisChart(dim.kind === 'text' ? 'bar' : 'line', rows, dim, measures, fmt);
}

/** The chart a report section's chartSpec asks for, or null when the spec is unknown or names missing columns. */
export function chartFromSpec(spec: unknown, rows: readonly Row[], columns: readonly Column[], fmt: Formatter): ChartModel | null {
  const parsed = ChartSpecSchema.safeParse(spec);
  if (!parsed.success) return null;
  const byName = (name: string) => columns.find((c) => c.name === name);
  const s = parsed.data;
  if (s.type === 'pie') {
    const label = byName(s.label);
    const value = byName(s.value);
    return label && value ? pieChart(rows, label, value, fmt) : null;
  }
  const x = byName(s.x);
  const ys = (Array.isArray(s.y) ? s.y : [s.y]).map(byName);
  if (!x || ys.some((c) => c === undefined)) return null;
  return axisChart(
    s.type,
    rows,
    x,
    ys.filter((c): c is Column => c !== undefined),
    fmt,
  );
}

function pointsOf(rows: readonly Row[], x: Column, y: Column, fmt: Formatter): Point[] {
  return rows.map((r) => ({ label: fmt.cell(r[x.name], x), key: r[x.name], value: numericValue(r[y.name]) }));
}

function axisChart(type: 'bar' | 'line', rows: readonly Row[], x: Column, ys: Column[], fmt: Formatter): ChartModel {
  const shown = type === 'bar' ? Math.min(rows.length, MAX_BARS) : rows.length;
  const drawn = rows.slice(0, shown);
  return { type, x, series: ys.map((column) => ({ column, points: pointsOf(drawn, x, column, fmt) })), shown, total: rows.length };
}

function pieChart(rows: readonly Row[], label: Column, value: Column, fmt: Formatter): ChartModel {
  const all = pointsOf(rows, label, value, fmt)
    .filter((p) => p.value !== null && p.value > 0)
    .sort((a, b) => (b.value ?? 0) - (a.value ?? 0));
  let slices = all;
  if (all.length > MAX_SLICES) {
    const rest = all.slice(MAX_SLICES - 1);
    const other = rest.reduce((sum, p) => sum + (p.value ?? 0), 0);
    slices = [...all.slice(0, MAX_SLICES - 1), { label: `Other (${rest.length})`, key: null, value: other }];
  }
  return { type: 'pie', label, value, slices, shown: all.length, total: rows.length };
}

interface Extremes {
  max: Point;
  min: Point;
  total: number;
  count: number;
}

function extremes(points: readonly Point[]): Extremes | null {
  const valued = points.filter((p) => p.value !== null);
  const first = valued[0];
  if (!first) return null;
  let max = first;
  let min = first;
  let total = 0;
  for (const p of valued) {
    const v = p.value ?? 0;
    if (v > (max.value ?? 0)) max = p;
    if (v < (min.value ?? 0)) min = p;
    total += v;
  }
  return { max, min, total, count: valued.length };
}

/** One sentence per series (or one for a pie) saying what the chart shows: highest, lowest, total, shares. */
export function summarize(model: ChartModel, fmt: Formatter): string[] {
  const num = (v: number | null, c: Column) => (v === null ? 'null' : fmt.number(v, c.type));
  if (model.type === 'pie') {
    const total = model.slices.reduce((s, p) => s + (p.value ?? 0), 0);
    if (total === 0) return [`${labelOf(model.value.name)} by ${labelOf(model.label.name)}: no positive values to draw.`];
    const shares = model.slices.map(
      (p) => `${p.label} ${fmt.number(((p.value ?? 0) / total) * 100, 'FLOAT64')}% (${num(p.value, model.value)})`,
    );
    const left = model.total - model.shown;
    return [
      `${labelOf(model.value.name)} by ${labelOf(model.label.name)}: ${shares.join(', ')}; total ${num(total, model.value)}.` +
        (left > 0 ? ` ${left} row${left === 1 ? '' : 's'} with no positive value not drawn.` : ''),
    ];
  }
  const dim = labelOf(model.x.name).toLowerCase();
  const sentences = model.series.map((s) => {
    const e = extremes(s.points);
    const name = labelOf(s.column.name);
    if (!e) return `${name}: no values.`;
    const at = model.type === 'line' ? 'on' : 'for';
    return (
      `${name}: highest ${num(e.max.value, s.column)} ${at} ${e.max.label}, lowest ${num(e.min.value, s.column)} ${at} ${e.min.label}, ` +
      `total ${num(e.total, s.column)} over ${e.count} ${dim} value${e.count === 1 ? '' : 's'}.`
    );
  });
  if (model.shown < model.total)
    sentences.push(`The chart draws the first ${model.shown} of ${model.total} rows; the table lists them all.`);
  return sentences;
}
