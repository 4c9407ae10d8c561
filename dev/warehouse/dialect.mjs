// BigQuery GoogleSQL -> DuckDB rewrite, token by token. Only what commonly differs is rewritten; the
// rest is handed to DuckDB as written. String literals and comments are never rewritten inside: the
// tokenizer reads them whole, decodes BigQuery's escapes and re-emits them in DuckDB's quoting.
// Every emitted piece remembers the offset of the source token it came from, so DuckDB's error
// positions can be reported against the user's own SQL.

import { DialectError, buildTree, isOp, isTrivia, isWord, joinPieces, nodePos, tokenize } from './dialect-tokenize.mjs';
import { rwSeq } from './dialect-rewrite.mjs';

// The stages: dialect-tokenize.mjs (tokens, tree, pieces), dialect-rewrite.mjs (clauses), dialect-functions.mjs
// (function calls and types). This module holds the entry points.
export { DialectError, duckIdent, duckString, tokenize } from './dialect-tokenize.mjs';
export { translateFormat } from './dialect-functions.mjs';
export { TABLE_SUFFIX, WILDCARD_SHARD_ALIAS } from './dialect-rewrite.mjs';

/** Table functions a query may use; everything else (file readers, catalog introspection) is refused. */
export const ALLOWED_TABLE_FUNCTIONS = new Set(['unnest', 'range', 'generate_series']);

/** Helper macros the rewrite relies on; created once per engine in the default catalog. */
export const SUPPORT_MACROS = [
  'CREATE OR REPLACE MACRO bq_safe_divide(a, b) AS CASE WHEN b = 0 THEN NULL ELSE a / b END',
  // Start of the week containing d, weeks starting on weekday k (0 = Sunday), as BigQuery's WEEK(<day>).
  'CREATE OR REPLACE MACRO bq_week_start(d, k) AS CAST(d AS DATE) - CAST((dayofweek(CAST(d AS DATE)) - k + 7) % 7 AS INTEGER)',
  'CREATE OR REPLACE MACRO bq_regexp_extract(s, r, g) AS CASE WHEN regexp_matches(s, r) THEN regexp_extract(s, r, g) END',
  // RANGE_BUCKET(point, sorted_array): how many boundaries are <= point.
  'CREATE OR REPLACE MACRO bq_range_bucket(p, a) AS CASE WHEN p IS NULL THEN NULL ELSE len(list_filter(a, x -> x <= p)) END',
  // FOR SYSTEM_TIME AS OF ts: true within the table's time-travel window (dialect-rewrite.mjs, timeTravel), else
  // the refusal BigQuery gives.
  "CREATE OR REPLACE MACRO bq_time_travel(ts, created, now) AS CASE WHEN CAST(ts AS TIMESTAMPTZ) BETWEEN greatest(created, now - INTERVAL 7 DAY) AND now THEN TRUE ELSE error('Invalid snapshot time ' || CAST(ts AS VARCHAR) || ' for FOR SYSTEM_TIME AS OF: a table can be read as of its creation (' || CAST(created AS VARCHAR) || ') or later, within the last 7 days, and not in the future') END",
  // NET.HOST(url): scheme, user info and port removed; surrounding spaces trimmed; NULL when no host is left.
  "CREATE OR REPLACE MACRO bq_net_host(u) AS nullif(regexp_extract(trim(u), '^(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://)?(?:[^/?#@]*@)?(\\[[^\\]]*\\]|[^/?#:]*)', 1), '')",
  "CREATE OR REPLACE MACRO bq_initcap(s) AS array_to_string(list_transform(string_split(lower(s), ' '), w -> upper(w[1]) || w[2:]), ' ')",
];

// ---------------------------------------------------------------------------------------------------------
// Public entry points

/**
 * @typedef {import('./dialect-tokenize.mjs').Node} Node
 * @typedef {{ project: string, datasets: Iterable<string>, today: string, tablesOf?: (dataset: string) => string[] }} DialectContext
 * @typedef {{ sql: string, statementType: string, statementCount: number, sourceOffset: (outOffset: number) => number }} Rewritten
 */

/**
 * Classifies a BigQuery statement (or script) by its leading keywords, as BigQuery's dry run reports it.
 * @returns {{ statementType: string, statementCount: number }}
 */
export function classify(sql) {
  const statements = splitStatements(buildTree(tokenize(sql)));
  if (statements.length === 0) throw new DialectError('Syntax error: Unexpected end of script', 0);
  if (statements.length > 1) return { statementType: 'SCRIPT', statementCount: statements.length };
  return { statementType: statementTypeOf(statements[0]), statementCount: 1 };
}

/**
 * Rewrites one BigQuery SELECT statement for DuckDB.
 * @param {string} sql
 * @param {DialectContext} ctx
 * @returns {Rewritten}
 */
export function toDuckDb(sql, ctx) {
  const tree = buildTree(tokenize(sql));
  const statements = splitStatements(tree);
  if (statements.length === 0) throw new DialectError('Syntax error: Unexpected end of script', 0);
  const state = {
    project: ctx.project,
    datasets: new Set([...ctx.datasets].map((d) => d.toLowerCase())),
    today: ctx.today,
    unnestCount: 0,
    rewrite: rwSeq,
    tablesOf: ctx.tablesOf ?? (() => []),
    wildcard: null,
  };
  const pieces = joinPieces(
    statements.map((st) => rwSeq(st, state)),
    ';\n',
    0,
  );
  let out = '';
  const starts = [];
  const srcs = [];
  for (const pc of pieces) {
    starts.push(out.length);
    srcs.push(pc.p);
    out += pc.s;
  }
  const { statementType } = statements.length > 1 ? { statementType: 'SCRIPT' } : { statementType: statementTypeOf(statements[0]) };
  return {
    sql: out,
    statementType,
    statementCount: statements.length,
    sourceOffset(outOffset) {
      let lo = 0;
      let hi = starts.length - 1;
      let best = 0;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid] <= outOffset) {
          best = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      return srcs[best] ?? 0;
    },
  };
}

/** 1-based line and column of an offset, as BigQuery's "[line:column]". */
export function lineColumn(sql, offset) {
  const before = sql.slice(0, Math.max(0, Math.min(offset, sql.length)));
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return { line, column };
}

function splitStatements(tree) {
  /** @type {Node[][]} */
  const statements = [[]];
  for (const nd of tree) {
    if (isOp(nd, ';')) statements.push([]);
    else statements[statements.length - 1].push(nd);
  }
  return statements.filter((st) => st.some((nd) => !isTrivia(nd)));
}

function statementTypeOf(nodes) {
  const words = [];
  for (const nd of nodes) {
    if (isTrivia(nd)) continue;
    if (nd.k === 'group') {
      if (words.length === 0) return statementTypeOf(nd.kids);
      break;
    }
    if (nd.tok.type !== 'id') break;
    words.push(nd.tok.text.toUpperCase());
    if (words.length >= 6) break;
  }
  const [first] = words;
  switch (first) {
    case 'SELECT':
    case 'WITH':
    case 'FROM': // pipe syntax: FROM t |> ...
      return 'SELECT';
    case 'INSERT':
    case 'UPDATE':
    case 'DELETE':
    case 'MERGE':
    case 'GRANT':
    case 'REVOKE':
    case 'ASSERT':
      return first;
    case 'TRUNCATE':
      return 'TRUNCATE_TABLE';
    case 'EXPORT':
      return 'EXPORT_DATA';
    case 'LOAD':
      return 'LOAD_DATA';
    case 'CREATE':
    case 'DROP':
    case 'ALTER': {
      const object = words.slice(1).find((w) => ['TABLE', 'VIEW', 'FUNCTION', 'PROCEDURE', 'SCHEMA', 'MODEL', 'ROW'].includes(w));
      const materialized = words.includes('MATERIALIZED') ? 'MATERIALIZED_' : '';
      const asSelect = first === 'CREATE' && object === 'TABLE' && nodes.some((nd) => isWord(nd, 'AS')) ? '_AS_SELECT' : '';
      return `${first}_${materialized}${object ?? 'TABLE'}${asSelect}`;
    }
    case 'DECLARE':
    case 'SET':
    case 'BEGIN':
    case 'IF':
    case 'LOOP':
    case 'WHILE':
    case 'CALL':
    case 'EXECUTE':
    case 'FOR':
    case 'REPEAT':
      return 'SCRIPT';
    default:
      throw new DialectError(
        `Syntax error: Unexpected ${first ? `keyword ${first}` : 'token'}`,
        nodes.find((nd) => !isTrivia(nd)) ? nodePos(nodes.find((nd) => !isTrivia(nd))) : 0,
      );
  }
}
