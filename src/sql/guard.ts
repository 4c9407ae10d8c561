/**
 * The read-only SQL guard: gates 2a, 2b and the verdict of 2c of the security model (docs/architecture.md). Pure: no I/O,
 * no clock; the parser is WebAssembly loaded from the bundle. See docs/sql-guard.md for the rules.
 *
 *   checkSql(sql, scope)      2a size/shape prescan, 2b parse + whole-tree table resolution
 *   checkDryRun(dry, scope)   2c verdict on BigQuery's dry-run statistics (the caller runs the dry run)
 */
import { ApiError } from '../errors';
import { parseBigQuery } from './parser';
import { prescan, toParserIndices, toUserIndex, toUserPosition, type SqlPosition } from './prescan';
import { Rejection, resolveRelations, type GuardScope, type ProjectRef, type RejectCode } from './relations';

export type { GuardScope } from './relations';
export type { SqlPosition } from './prescan';
export { MAX_NESTING_DEPTH, MAX_PARSE_WORK, MAX_SQL_LENGTH } from './prescan';

export interface GuardFailure {
  ok: false;
  /** INVALID_SQL: not a single read-only statement; FORBIDDEN_TABLE: data outside the brand; QUERY_FAILED: syntax and similar. */
  code: RejectCode;
  message: string;
  /** Where in the user's SQL, when known (1-based; columns count UTF-16 code units, as every position here). */
  position?: SqlPosition;
}

/**
 * The project callers write in SQL, whatever project the deployment's warehouse is in (BIGQUERY_PROJECT):
 * `service-v1.<dataset>.<table>`. The guard checks names against it; `withProject` maps it on the way in.
 */
export const CONTRACT_PROJECT = 'service-v1';

export type CheckSqlResult =
  | {
      ok: true;
      tables: string[];
      /**
       * UTF-16 indices in the SQL where a table or routine reference writes `scope.project` (just past the opening
       * backtick when quoted), ascending: the only places `withProject` changes.
       */
      projectAt: number[];
    }
  | GuardFailure;

/**
 * Gates 2a and 2b. Accepts exactly one SELECT / WITH ... SELECT statement whose every table reference is
 * `<project>.<dataset>.<table>` or `<project>.<dataset>.INFORMATION_SCHEMA.COLUMNS`; returns the tables read
 * (canonical names, unique, in order of first use; CTE names are not tables).
 * Async only so the parser could load lazily; it does no I/O.
 */
export async function checkSql(sql: string, scope: GuardScope): Promise<CheckSqlResult> {
  const pre = prescan(sql);
  if (!pre.ok) return failure(pre.code, pre.message, pre.position);

  const parsed = parseBigQuery(pre.sql);
  // Positions in the parser's text, mapped back to the user's (pipe syntax adds text, see prescan.ts).
  const at = (p: SqlPosition | undefined) => (p ? toUserPosition(sql, pre, p) : undefined);
  if (!parsed.ok) return failure('QUERY_FAILED', syntaxMessage(parsed.message), at(parsed.position));

  const refs: ProjectRef[] = [];
  let tables: string[];
  try {
    tables = resolveRelations(parsed.statements, scope, refs);
  } catch (err) {
    if (err instanceof Rejection) return failure(err.code, err.message, at(err.position));
    throw err;
  }
  const starts = toParserIndices(
    pre,
    refs.map((r) => r.start),
  );
  const ends = toParserIndices(
    pre,
    refs.map((r) => r.end ?? r.start),
  );
  const projectAt: number[] = [];
  for (const [n, ref] of refs.entries()) {
    const start = projectIndex(sql, pre.sql, starts[n] ?? -1, ends[n] ?? -1, ref.quoted, scope.project, toUserIndex(pre, starts[n] ?? -1));
    // A span the parser resolved that is not the project name as written at the same place of both texts is a
    // mismatch between the parser's positions and the text: refused, never mapped somewhere else.
    if (start < 0) {
      return failure(
        'QUERY_FAILED',
        'the checker could not match a table reference to its place in the text, so the query is refused; please report this query',
        at(ref.start),
      );
    }
    projectAt.push(start);
  }
  return { ok: true, tables, projectAt: [...new Set(projectAt)].sort((a, b) => a - b) };
}

const NAME_CHAR = /[A-Za-z0-9_-]/;

/**
 * The UTF-16 index in the user's text where a reference's first name writes `project`, or -1 when the parser's
 * span of that name (`from`..`to` in its text `parsed`, at `user` in the user's `sql`) is not exactly that: the
 * same characters in both texts (so not a comment the lexer blanked, nor text added for the parser), a quoted
 * name `` `project...` `` from backtick to backtick, or the unquoted name `project` and nothing longer.
 */
function projectIndex(sql: string, parsed: string, from: number, to: number, quoted: boolean, project: string, user: number): number {
  if (from < 0 || user < 0) return -1;
  if (quoted) {
    const written = parsed.slice(from, to);
    const next = written[project.length + 1];
    const exact =
      to - from >= project.length + 2 &&
      written === sql.slice(user, user + written.length) &&
      written.startsWith(`\`${project}`) &&
      written.endsWith('`') &&
      (next === '`' || next === '.');
    return exact ? user + 1 : -1;
  }
  const after = project.length;
  const exact =
    parsed.startsWith(project, from) &&
    sql.startsWith(project, user) &&
    !NAME_CHAR.test(parsed[from + after] ?? '') &&
    !NAME_CHAR.test(sql[user + after] ?? '');
  return exact ? user : -1;
}

/**
 * `sql` with the project name `from` (written at each index of `projectAt`, from checkSql) replaced by `to`: the
 * contract's `service-v1` becomes the deployment's project at exactly the table and routine references the guard
 * resolved. String literals, comments, aliases and columns that spell `service-v1` are left as written.
 */
export function withProject(sql: string, projectAt: readonly number[], from: string, to: string): string {
  if (from === to || projectAt.length === 0) return sql;
  const parts: string[] = [];
  let last = 0;
  for (const i of projectAt) {
    if (!sql.startsWith(from, i)) throw new Error(`withProject: ${JSON.stringify(from)} is not at index ${i}`);
    parts.push(sql.slice(last, i), to);
    last = i + from.length;
  }
  parts.push(sql.slice(last));
  return parts.join('');
}

/** The parser's expectation after `|>` when the step is one it does not read (DISTINCT, WINDOW, ...). */
const UNKNOWN_PIPE_OPERATOR = /^Expected: one of SELECT or EXTEND or SET or DROP or AS or WHERE\b.*, found: (.*)$/;

function syntaxMessage(parserMessage: string): string {
  if (/recursion limit exceeded/.test(parserMessage)) return 'query is nested too deeply for the checker (parser recursion limit)';
  const pipe = UNKNOWN_PIPE_OPERATOR.exec(parserMessage);
  if (pipe) {
    return (
      `pipe operator ${pipe[1] ?? ''} is not supported by the checker; supported after |>: SELECT, EXTEND, SET, DROP, RENAME, AS, ` +
      'WHERE, AGGREGATE, ORDER BY, LIMIT, TABLESAMPLE, UNION, INTERSECT, EXCEPT, PIVOT, UNPIVOT and JOIN'
    );
  }
  return `syntax error: ${parserMessage}`;
}

/** The parts of a `jobs.insert` dry run the verdict reads (structurally the warehouse client's DryRunResult). */
export interface DryRunFacts {
  statementType: string;
  referencedTables: readonly { projectId: string; datasetId: string; tableId: string }[];
  referencedRoutines: readonly { projectId: string; datasetId: string; routineId: string }[];
  /**
   * Every other `referenced*` entry of the dry run's `statistics.query` (models, property graphs, whatever
   * BigQuery adds next), as it came: the gate does not know what they read, so any non-empty one is refused.
   */
  otherReferences: Readonly<Record<string, unknown>>;
}

/** BigQuery may leave entries out of referencedTables beyond this many, so the list cannot be trusted. */
export const MAX_REFERENCED_TABLES = 50;

/**
 * Gate 2c, on the statistics of BigQuery's own dry run, cross-checked with `parsedTables` (what `checkSql`
 * found). It fails closed wherever the dry run cannot vouch for what the query reads:
 *
 * - the statement type must be SELECT;
 * - no reference of a kind the gate does not know (anything but tables and routines);
 * - when the parser found a table, the dry run must list at least one: a missing list (BigQuery leaves it out of
 *   cache hits, and of whatever it does not report) is not an empty query;
 * - every listed table and routine is in `scope.project` / `scope.dataset`;
 * - 50 or more tables (a list BigQuery may cut short) pass only for wildcard tables of the dataset: when every
 *   table the parser found is a wildcard (`events_*`) and every listed table matches one. A wildcard reads only
 *   native tables of its own dataset (BigQuery refuses one that matches a view or an external table:
 *   https://cloud.google.com/bigquery/docs/querying-wildcard-tables#limitations), so the tables left off the list
 *   are more shards of the same dataset. Any other query must stay under 50.
 */
export function checkDryRun(dry: DryRunFacts, scope: GuardScope, parsedTables: readonly string[]): { ok: true } | GuardFailure {
  if (dry.statementType !== 'SELECT') {
    return failure('INVALID_SQL', `only SELECT statements are allowed (BigQuery classified this one as ${dry.statementType || 'unknown'})`);
  }
  for (const [kind, refs] of Object.entries(dry.otherReferences)) {
    if (Array.isArray(refs) && refs.length === 0) continue;
    return failure(
      'FORBIDDEN_TABLE',
      `BigQuery's dry run reports ${kind}, a kind of reference the checker does not know; the query is refused`,
    );
  }
  const parsedData = parsedTables.filter((t) => !isInformationSchema(t));
  if (dry.referencedTables.length === 0 && parsedData.length > 0) {
    return failure(
      'QUERY_FAILED',
      "BigQuery's dry run listed no tables although the query reads some, so what it reads cannot be checked; the query is refused",
    );
  }
  for (const t of dry.referencedTables) {
    if (t.projectId !== scope.project || t.datasetId !== scope.dataset) {
      return failure('FORBIDDEN_TABLE', `\`${t.projectId}.${t.datasetId}.${t.tableId}\` is outside the brand's dataset ${scope.dataset}`);
    }
  }
  for (const r of dry.referencedRoutines) {
    if (r.projectId !== scope.project || r.datasetId !== scope.dataset) {
      return failure(
        'FORBIDDEN_TABLE',
        `routine \`${r.projectId}.${r.datasetId}.${r.routineId}\` is outside the brand's dataset ${scope.dataset}`,
      );
    }
  }
  if (dry.referencedTables.length >= MAX_REFERENCED_TABLES && !onlyWildcardShards(dry, parsedTables, scope)) {
    return failure('QUERY_FAILED', tooManyTables(dry, parsedTables, scope));
  }
  return { ok: true };
}

/**
 * The refusal of a query over the table limit, saying what counted (each wildcard's matches, the other tables) and
 * what to write instead, so that whoever wrote it (often an assistant) can fix it without guessing.
 */
function tooManyTables(dry: DryRunFacts, parsedTables: readonly string[], scope: GuardScope): string {
  const qualifier = `${scope.project}.${scope.dataset}.`;
  const wildcards = parsedTables.filter((t) => t.startsWith(qualifier) && t.endsWith('*')).map((t) => t.slice(qualifier.length));
  let left = dry.referencedTables.map((t) => t.tableId);
  const counted: string[] = [];
  for (const w of wildcards) {
    const prefix = w.slice(0, -1);
    const matched = left.filter((t) => t.startsWith(prefix));
    left = left.filter((t) => !t.startsWith(prefix));
    counted.push(`\`${w}\` matches ${matched.length}`);
  }
  if (left.length > 0) {
    const named = left.slice(0, 3).map((t) => `\`${t}\``);
    const more = left.length > 3 ? ` and ${left.length - 3} more` : '';
    counted.push(`${wildcards.length > 0 ? 'other tables' : 'tables'} ${named.join(', ')}${more} count ${left.length}`);
  }
  const head =
    `the query reads ${dry.referencedTables.length} tables as BigQuery counts them (${counted.join('; ')}), ` +
    `over the limit of ${MAX_REFERENCED_TABLES - 1}: every table counts, each shard a wildcard matches and each ` +
    'table a view reads included, ' +
    'because BigQuery may leave tables out of a longer list. ';
  return wildcards.length > 0
    ? head +
        'A wildcard may match more only when it is the only table the query reads: query the wildcard alone, ' +
        'choosing shards with a `_TABLE_SUFFIX` filter, and join the other tables in a separate query; ' +
        `or match fewer shards with a longer prefix than \`${wildcards[0] ?? ''}\``
    : head +
        'Write one wildcard table with a `_TABLE_SUFFIX` filter and no other table instead of naming many shards ' +
        `(FROM \`${CONTRACT_PROJECT}.${scope.dataset}.events_*\` WHERE _TABLE_SUFFIX BETWEEN ...), ` +
        'or split the query to read fewer tables';
}

/** INFORMATION_SCHEMA views are not listed by every dry run, so the cross-check leaves them out. */
function isInformationSchema(table: string): boolean {
  return /\.INFORMATION_SCHEMA\./i.test(table);
}

/** Every parsed table is a wildcard of the scope's dataset and every listed table is one of its shards. */
function onlyWildcardShards(dry: DryRunFacts, parsedTables: readonly string[], scope: GuardScope): boolean {
  const qualifier = `${scope.project}.${scope.dataset}.`;
  const prefixes: string[] = [];
  for (const t of parsedTables) {
    if (!t.startsWith(qualifier) || !t.endsWith('*')) return false;
    const prefix = t.slice(qualifier.length, -1);
    if (prefix.includes('*')) return false;
    prefixes.push(prefix);
  }
  if (prefixes.length === 0) return false;
  return dry.referencedTables.every((t) => prefixes.some((p) => t.tableId.startsWith(p)));
}

/**
 * The ApiError for a guard verdict. `details.stage` tells users our rule ("guard") from BigQuery's own
 * complaint ("warehouse", raised by the warehouse client); syntax errors carry the line and column.
 */
export function guardError(f: GuardFailure, gate: 'parse' | 'dry-run' = 'parse'): ApiError {
  const details: { stage: 'guard'; gate: 'parse' | 'dry-run'; line?: number; column?: number } = { stage: 'guard', gate };
  if (f.position) {
    details.line = f.position.line;
    details.column = f.position.column;
  }
  return new ApiError(f.code, f.message, { details });
}

function failure(code: RejectCode, message: string, position?: SqlPosition): GuardFailure {
  return position ? { ok: false, code, message, position } : { ok: false, code, message };
}
