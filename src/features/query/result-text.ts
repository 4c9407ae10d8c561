/**
 * How a run_query result is sized and rendered for assistants. `structuredContent` carries the result once; the
 * text block a model reads is a compact rendering of the same data: header lines (rows shown, total, how to
 * continue, the window, the budget left) and then the rows as CSV. Sizes are measured as the tool result is sent
 * (JSON, UTF-8), so one result stays within `caps.bytes` whatever the rows hold.
 */

export interface ResultCaps {
  /** Rows per result (MCP_ROW_CAP). */
  rows: number;
  /** Bytes per result, structured JSON and text together (MCP_MAX_RESULT_BYTES). */
  bytes: number;
}

/** Room kept for everything but the rows: envelope, schema, stats, usage, note and cursor (twice), header lines. */
export const RESULT_OVERHEAD_BYTES = 6 * 1024;

export function resultCaps(rows: number, bytes: number): ResultCaps {
  return { rows, bytes };
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csvLine(columns: readonly string[], row: Record<string, unknown>): string {
  return columns.map((c) => csvCell(row[c])).join(',');
}

function columnsOf(rows: readonly Record<string, unknown>[], schema?: readonly { name: string }[]): string[] {
  if (schema && schema.length > 0) return schema.map((f) => f.name);
  return rows[0] ? Object.keys(rows[0]) : [];
}

/**
 * How many of `rows` (in order) fit one result: at most `caps.rows`, and their cost as sent (the row's JSON in
 * structuredContent plus its CSV line in the text, both JSON-escaped) within `caps.bytes` less the overhead.
 */
export function rowsThatFit(rows: readonly Record<string, unknown>[], caps: ResultCaps): number {
  const columns = columnsOf(rows);
  let left = caps.bytes - RESULT_OVERHEAD_BYTES - utf8(JSON.stringify(columns.join(',')));
  const n = Math.min(rows.length, caps.rows);
  for (let i = 0; i < n; i++) {
    const row = rows[i] ?? {};
    left -= utf8(JSON.stringify(row)) + 1 + utf8(JSON.stringify(csvLine(columns, row))) - 2 + 2;
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
  schema?: { name: string }[];
  stats?: { dryRun: boolean; totalBytesBilled: number; totalBytesProcessed: number };
  window?: { startDate: string; endDate: string; cadence?: string; timezone: string };
  note?: string;
  usage: { runsLimit: number; runsRemaining: number; bytesLimit: number; bytesRemaining: number; maxBytesBilled: number };
}

/** The text block: header lines, a blank line, then CSV with a header row. `firstRow` is this page's 0-based start. */
export function renderResultText(r: RenderedResult, firstRow: number): string {
  const lines: string[] = [];
  if (r.stats?.dryRun) {
    lines.push(`Dry run of brand ${r.brandId}: the query is valid and would process ${r.stats.totalBytesProcessed} bytes (per-query ceiling ${r.usage.maxBytesBilled} bytes). Nothing ran or was billed.`);
  } else if (r.rowCount === 0) {
    lines.push(`Brand ${r.brandId}: no rows (totalRows ${r.totalRows}).`);
  } else {
    lines.push(`Brand ${r.brandId}: rows ${firstRow + 1}-${firstRow + r.rowCount} of ${r.totalRows}.${r.note ? ` ${r.note}` : ''}`);
  }
  if (r.window) {
    lines.push(`Window: ${r.window.startDate} to ${r.window.endDate}${r.window.cadence ? ` (${r.window.cadence})` : ''}, time zone ${r.window.timezone}.`);
  }
  const u = r.usage;
  const billed = r.stats && !r.stats.dryRun ? `Billed ${r.stats.totalBytesBilled} bytes. ` : '';
  lines.push(
    `${billed}Budget left (rolling 24 h): ${u.runsRemaining} of ${u.runsLimit} runs, ${u.bytesRemaining} of ${u.bytesLimit} bytes; per-query ceiling ${u.maxBytesBilled} bytes.`,
  );
  if (r.rowCount === 0) return lines.join('\n');
  const columns = columnsOf(r.rows, r.schema);
  return [...lines, '', columns.map(csvCell).join(','), ...r.rows.map((row) => csvLine(columns, row))].join('\n');
}
