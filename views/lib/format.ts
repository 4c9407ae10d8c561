import type { Field, Row } from './contract';

// Pure cell formatting and ordering, driven by the result schema's BigQuery types (docs/warehouse-client.md says
// how each type arrives as JSON: INT64 a number or, beyond 2^53, an exact decimal string; NUMERIC always a
// string; DATE/DATETIME/TIME strings; TIMESTAMP ISO 8601 in UTC).

export type ColumnKind = 'number' | 'date' | 'timestamp' | 'text' | 'bool' | 'other';

const NUMBER_TYPES = new Set(['INTEGER', 'INT64', 'FLOAT', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC']);
const DATE_TYPES = new Set(['DATE', 'DATETIME']);

export function kindOfType(type: string): ColumnKind {
  const t = type.toUpperCase();
  if (NUMBER_TYPES.has(t)) return 'number';
  if (DATE_TYPES.has(t)) return 'date';
  if (t === 'TIMESTAMP') return 'timestamp';
  if (t === 'STRING') return 'text';
  if (t === 'BOOLEAN' || t === 'BOOL') return 'bool';
  return 'other';
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

/** A column as the views use it: its name, BigQuery type (or one read from the values) and kind. */
export interface Column {
  name: string;
  type: string;
  kind: ColumnKind;
}

/** Columns from the schema; without one (or for names it lacks), the kind is read from the values. */
export function columnsOf(rows: readonly Row[], schema?: readonly Field[]): Column[] {
  if (schema && schema.length > 0) return schema.map((f) => ({ name: f.name, type: f.type, kind: kindOfType(f.type) }));
  const names = rows.length > 0 ? Object.keys(rows[0] ?? {}) : [];
  return names.map((name) => {
    const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
    if (values.length > 0 && values.every((v) => typeof v === 'number')) return { name, type: 'FLOAT64', kind: 'number' as const };
    if (values.length > 0 && values.every((v) => typeof v === 'string' && ISO_DATE.test(v)))
      return { name, type: 'DATE', kind: 'date' as const };
    if (values.length > 0 && values.every((v) => typeof v === 'boolean')) return { name, type: 'BOOL', kind: 'bool' as const };
    return { name, type: 'STRING', kind: 'text' as const };
  });
}

/** A cell as a number for charts and sorting: numbers, and decimal strings (NUMERIC, big INT64). Else null. */
export function numericValue(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export interface Formatter {
  locale: string | undefined;
  number(v: number | string, type?: string): string;
  /** Short form for chart axes: 549K, 1.2M. */
  compact(v: number): string;
  date(v: string): string;
  cell(v: unknown, column: Column): string;
}

/** Formatters for one locale (the host's, else the browser's). */
export function formatterFor(locale?: string): Formatter {
  const ints = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const decimals = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const small = new Intl.NumberFormat(locale, { maximumSignificantDigits: 3 });
  const exact = new Intl.NumberFormat(locale, { maximumFractionDigits: 20 });
  const short = new Intl.NumberFormat(locale, { notation: 'compact', maximumFractionDigits: 1 });
  const day = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  const dayTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

  const number = (v: number | string, type?: string): string => {
    const t = type?.toUpperCase();
    if (typeof v === 'string') {
      // NUMERIC and big INT64 arrive as exact decimal strings: format the string itself so no digit is rounded.
      if (!/^-?\d+(\.\d+)?$/.test(v)) return v;
      return exact.format(v as `${number}`);
    }
    if (t === 'INTEGER' || t === 'INT64' || Number.isInteger(v)) return ints.format(v);
    return Math.abs(v) < 1 && v !== 0 ? small.format(v) : decimals.format(v);
  };

  const date = (v: string): string => {
    if (ISO_DATE.test(v)) {
      const [y, m, d] = v.split('-').map(Number);
      return day.format(new Date(Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1)));
    }
    if (ISO_DATETIME.test(v)) {
      // DATETIME has no zone and TIMESTAMP arrives in UTC: both are shown as the wall time they hold.
      const t = Date.parse(`${v.replace(' ', 'T').replace(/Z$/, '')}Z`);
      if (!Number.isNaN(t)) return dayTime.format(new Date(t));
    }
    return v;
  };

  const cell = (v: unknown, column: Column): string => {
    if (v === null || v === undefined) return 'null';
    switch (column.kind) {
      case 'number':
        return typeof v === 'number' || typeof v === 'string' ? number(v, column.type) : JSON.stringify(v);
      case 'date':
        return typeof v === 'string' ? date(v) : String(v);
      case 'timestamp':
        return typeof v === 'string' ? `${date(v)} UTC` : String(v);
      case 'bool':
        return v === true ? 'true' : v === false ? 'false' : String(v);
      default:
        return typeof v === 'string' ? v : JSON.stringify(v);
    }
  };

  return { locale, number, compact: (v) => short.format(v), date, cell };
}

export type SortDirection = 'ascending' | 'descending';

/** Orders two cells of one column by its kind; nulls always last, whichever the direction. */
export function compareCells(a: unknown, b: unknown, kind: ColumnKind, direction: SortDirection): number {
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  if (aNull || bNull) return aNull === bNull ? 0 : aNull ? 1 : -1;
  let c: number;
  if (kind === 'number') {
    c = (numericValue(a) ?? 0) - (numericValue(b) ?? 0);
  } else if (kind === 'bool') {
    c = Number(a === true) - Number(b === true);
  } else {
    const as = typeof a === 'string' ? a : JSON.stringify(a);
    const bs = typeof b === 'string' ? b : JSON.stringify(b);
    // ISO dates and timestamps order correctly as text.
    c = kind === 'text' ? as.localeCompare(bs, undefined, { numeric: true }) : as < bs ? -1 : as > bs ? 1 : 0;
  }
  return direction === 'ascending' ? c : -c;
}

/** Rows sorted by one column (stable: equal cells keep their order). */
export function sortRows(rows: readonly Row[], column: Column, direction: SortDirection): Row[] {
  return rows
    .map((row, i) => ({ row, i }))
    .sort((x, y) => compareCells(x.row[column.name], y.row[column.name], column.kind, direction) || x.i - y.i)
    .map((x) => x.row);
}

/** "revenue" / "avg_unit_price" / "aov" as a label: "Revenue", "Avg unit price", "AOV" (short names are acronyms). */
export function labelOf(name: string): string {
  const words = name.replace(/_+/g, ' ').trim();
  if (/^[a-z]{2,3}$/i.test(words)) return words.toUpperCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
