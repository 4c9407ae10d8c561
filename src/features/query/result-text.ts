import type { BudgetLeft } from '../../usage/usage';

/**
 * How a run_query result is sized and rendered for assistants. The result reaches the model once, as one text
 * block holding compact JSON: the facts first (rows shown, total, the cursor once, the window, the budget left),
 * then `schema` (column names and types, in order) and `rows` as arrays in that order, not keyed objects, so a
 * column name is sent once per result instead of once per cell. No `structuredContent` copy (see docs/mcp.md,
 * "Results"). Sizes are measured as the tool result is sent (the text JSON-escaped inside the JSON-RPC answer,
 * UTF-8), so one result stays within `caps.bytes` whatever the rows hold.
 */

export interface ResultCaps {
  /** Rows per result at most (MCP_ROW_CAP, the row ceiling; a caller may ask for fewer). */
  rows: number;
  /** Bytes per result as sent (MCP_MAX_RESULT_BYTES). */
  bytes: number;
}

/** Room kept for everything but the rows: envelope, facts, note, cursor, window, stats, usage. */
export const RESULT_OVERHEAD_BYTES = 2 * 1024;
/** Room kept per column for the schema entry (name, type, mode, JSON-escaped). */
const SCHEMA_BYTES_PER_COLUMN = 64;

export function resultCaps(rows: number, bytes: number): ResultCaps {
  return { rows, bytes };
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

interface Field {
  name: string;
  type?: string;
  mode?: string;
  fields?: unknown[];
}

function columnsOf(rows: readonly Record<string, unknown>[], schema?: readonly Field[]): string[] {
  if (schema && schema.length > 0) return schema.map((f) => f.name);
  return rows[0] ? Object.keys(rows[0]) : [];
}

/** A row as an array in column order (absent cells as null, so positions never shift). */
export function rowArray(columns: readonly string[], row: Record<string, unknown>): unknown[] {
  return columns.map((c) => row[c] ?? null);
}

/** What one row costs in the answer: its array's JSON, escaped again inside the text block, plus a comma. */
function rowCost(columns: readonly string[], row: Record<string, unknown>): number {
  return utf8(JSON.stringify(JSON.stringify(rowArray(columns, row)))) - 2 + 1;
}

/**
 * How many of `rows` (in order) fit one result: at most `caps.rows`, and their cost as sent within `caps.bytes`
 * less the room for everything else. Rows are added while they fit, so a page of narrow rows holds many more than
 * one of wide rows.
 */
export function rowsThatFit(rows: readonly Record<string, unknown>[], caps: ResultCaps): number {
  const columns = columnsOf(rows);
  let left = caps.bytes - RESULT_OVERHEAD_BYTES - columns.length * SCHEMA_BYTES_PER_COLUMN - utf8(JSON.stringify(JSON.stringify(columns)));
  const n = Math.min(rows.length, caps.rows);
  for (let i = 0; i < n; i++) {
    left -= rowCost(columns, rows[i] ?? {});
    if (left < 0) return i;
  }
  return n;
}

export interface RenderedResult {
  brandId: string;
  rows: Record<string, unknown>[];
  rowCount: number;
  truncated: boolean;
  totalRows: number;
  nextCursor: string | null;
  schema?: Field[];
  stats?: { dryRun: boolean; totalBytesBilled: number; totalBytesProcessed: number };
  window?: { startDate: string; endDate: string; cadence?: string; timezone: string };
  note?: string;
  usage: BudgetLeft;
}

/**
 * The model's copy of a result: the same facts as the REST body, rows as arrays under `schema`, `firstRow` the
 * 1-based position of `rows[0]` in the whole result, and `note` in words (what was capped and how to continue).
 */
export function compactResult(r: RenderedResult, firstRow: number) {
  const schema = r.schema && r.schema.length > 0 ? r.schema : columnsOf(r.rows).map((name) => ({ name }));
  const columns = schema.map((f) => f.name);
  return {
    brandId: r.brandId,
    ...(r.note ? { note: r.note } : {}),
    totalRows: r.totalRows,
    firstRow: firstRow + 1,
    rowCount: r.rowCount,
    truncated: r.truncated,
    nextCursor: r.nextCursor,
    ...(r.window ? { window: r.window } : {}),
    ...(r.stats ? { stats: r.stats } : {}),
    usage: r.usage,
    schema,
    rows: r.rows.map((row) => rowArray(columns, row)),
  };
}

/** The text block: the compact result as JSON. `firstRow` is this page's 0-based start. */
export function renderResultText(r: RenderedResult, firstRow: number): string {
  return JSON.stringify(compactResult(r, firstRow));
}
