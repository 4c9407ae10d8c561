import { KNOWN_SLOTS } from '../../catalog/template';
import { lineOfPath, type JsonPath } from './json-lines';

/**
 * Where in a catalog file a warehouse error points. BigQuery reports `at [line:column]` of the SQL it received: the
 * template with its slots filled (`{dataset}` -> `acme`) and, at run time, the contract's project replaced by the
 * deployment's. Each replacement is an edit; walking the edits back turns a position in the sent SQL into one in
 * the template, and the template's line is an element of the file's `sql` array (or a stretch of its one string).
 * Pure: text in, positions out.
 */

/** One replacement: `from` characters at `at` of the original became `to` characters. */
export interface Edit {
  at: number;
  from: number;
  to: number;
}

const SLOT = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The edits `fillTemplate(template, values)` makes (only known slots with a value are replaced). */
export function slotEdits(template: string, values: Partial<Record<(typeof KNOWN_SLOTS)[number], string>>): Edit[] {
  const edits: Edit[] = [];
  for (const m of template.matchAll(SLOT)) {
    const v = (values as Record<string, string | undefined>)[m[1]!];
    if (v !== undefined && (KNOWN_SLOTS as readonly string[]).includes(m[1]!)) edits.push({ at: m.index, from: m[0].length, to: v.length });
  }
  return edits;
}

/** The edits `withProject(sql, projectAt, from, to)` makes. */
export function projectEdits(projectAt: readonly number[], from: string, to: string): Edit[] {
  return from === to ? [] : projectAt.map((at) => ({ at, from: from.length, to: to.length }));
}

/** The original offset of `offset` in the edited text; inside a replacement, the start of what it replaced. */
export function originalOffset(edits: readonly Edit[], offset: number): number {
  let delta = 0;
  for (const e of [...edits].sort((a, b) => a.at - b.at)) {
    const start = e.at + delta;
    if (offset < start) break;
    if (offset < start + e.to) return e.at;
    delta += e.to - e.from;
  }
  return offset - delta;
}

/** The offset of 1-based `line` and `column` in `text` (clamped to the text). */
export function offsetOf(text: string, line: number, column: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return Math.min(text.length, at + Math.max(0, column - 1));
}

/** 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

/**
 * The file line and column of SQL offset `offset` of an item's `sql` field, written either as an array of lines (one
 * per element, the usual form) or as one string. The column counts the file's characters, escapes included.
 */
export function fileSqlPosition(
  fileText: string,
  lines: Map<string, number>,
  sqlPath: JsonPath,
  sql: string,
  offset: number,
): { line: number; column: number } | null {
  const at = lineColumn(sql, offset);
  const asArray = lines.has([...sqlPath, 0].map(String).join('/'));
  const valuePath = asArray ? [...sqlPath, at.line - 1] : sqlPath;
  const fileLine = lineOfPath(lines, valuePath);
  if (fileLine === undefined) return null;
  const text = fileText.split('\n')[fileLine - 1] ?? '';
  // The value's opening quote on its line: for an array element, the first string on the line; for `"sql": "..."`,
  // the one after the key.
  const quote = asArray ? text.indexOf('"') : text.indexOf('"', text.indexOf(':', text.indexOf('"sql"')) + 1);
  if (quote < 0) return null;
  const prefix = asArray ? sql.split('\n')[at.line - 1]!.slice(0, at.column - 1) : sql.slice(0, offset);
  // A JSON string can hold no raw line break, so the whole value is on this line.
  return { line: fileLine, column: quote + 1 + (JSON.stringify(prefix).length - 2) + 1 };
}
