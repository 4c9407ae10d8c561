// BigQuery GoogleSQL -> DuckDB: the rewrite of a statement's tree, clause by clause. Table references are
// qualified against the job's project, UNNEST, SELECT AS STRUCT, typed literals and constructors, intervals and
// subscripts take DuckDB's form; function calls go to the functions stage. The rest is handed on as written.
import {
  DialectError,
  cat,
  duckIdent,
  duckString,
  isGroup,
  isOp,
  isTrivia,
  isWord,
  joinPieces,
  nextSig,
  nodePos,
  sig,
  splitArgs,
  text,
  trimWs,
} from './dialect-tokenize.mjs';
import { randomBytes } from 'node:crypto';
import {
  DATE_PARTS,
  FUNCTIONS,
  aliasOf,
  collation,
  flattenTypeTokens,
  functionCall,
  parseType,
  typeFromNodes,
} from './dialect-functions.mjs';
import { desugar } from './dialect-desugar.mjs';

/**
 * @typedef {import('./dialect-tokenize.mjs').Node} Node
 * @typedef {import('./dialect-tokenize.mjs').GroupNode} GroupNode
 * @typedef {import('./dialect-tokenize.mjs').Piece} Piece
 * @typedef {import('./dialect-functions.mjs').RewriteState} RewriteState
 */

/** Keywords that may be followed by "(" without being a function call. */
const NOT_FUNCTIONS = new Set([
  'AS',
  'IN',
  'EXISTS',
  'OVER',
  'FROM',
  'JOIN',
  'ON',
  'USING',
  'AND',
  'OR',
  'NOT',
  'WHEN',
  'THEN',
  'ELSE',
  'SELECT',
  'WITH',
  'UNION',
  'ALL',
  'DISTINCT',
  'BY',
  'WINDOW',
  'QUALIFY',
  'WHERE',
  'HAVING',
  'VALUES',
  'RECURSIVE',
  'LATERAL',
  'IS',
  'LIKE',
  'BETWEEN',
  'CASE',
  'END',
  'ANY',
  'SOME',
  'PARTITION',
  'ORDER',
  'ROWS',
  'RANGE',
  'INTERSECT',
  'EXCEPT',
  'LIMIT',
  'OFFSET',
  'GROUP',
  'CROSS',
  'INNER',
  'LEFT',
  'RIGHT',
  'FULL',
  'OUTER',
  'TABLESAMPLE',
  'PRECEDING',
  'FOLLOWING',
  'CURRENT',
  'UNBOUNDED',
  'ASC',
  'DESC',
  'NULLS',
  'FIRST',
  'LAST',
  'INTERVAL',
  'RETURNS',
]);

/** Words after which "[" starts an array literal rather than a subscript. */
const KEYWORDS = new Set([...NOT_FUNCTIONS, 'IF', 'NULL', 'TRUE', 'FALSE', 'ARRAY', 'STRUCT', 'UNNEST', 'RETURN']);

/** Clause keywords that end a FROM clause. */
const FROM_ENDERS = new Set(['WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'UNION', 'INTERSECT', 'EXCEPT', 'SELECT']);
/**
 * `FOR SYSTEM_TIME AS OF <expr>` after a table (and its alias). The data here never changes after the tables are
 * made (today 00:00 UTC, their creationTime), so the table as it is now is the right answer for every instant BigQuery
 * would read: from its creation, within the 7-day time-travel window, up to now
 * (https://cloud.google.com/bigquery/docs/time-travel). Any other instant is refused, as BigQuery refuses it: the
 * clause becomes `SEMI JOIN (SELECT 1) AS __time_travel_n ON bq_time_travel(<expr>, <created>, <now>)`, which keeps
 * the table's rows and columns as they are and raises when the instant is outside that range. The expression ends
 * at a comma, a join or a clause keyword.
 */
function timeTravel(nodes, i, j, st) {
  const p = nodes[i].tok.p;
  const as = nextSig(nodes, j + 1);
  const of = nextSig(nodes, as + 1);
  if (!isWord(nodes[as], 'AS') || !isWord(nodes[of], 'OF')) throw new DialectError('Syntax error: Expected AS OF after FOR SYSTEM_TIME', p);
  let end = of + 1;
  while (end < nodes.length && !isOp(nodes[end], ',') && !isOp(nodes[end], '|>') && !isWord(nodes[end], ...TRAVEL_END)) end++;
  const instant = rwSeq(trimWs(nodes.slice(of + 1, end)), st);
  const created = `TIMESTAMPTZ ${duckString(`${st.today} 00:00:00+00`)}`;
  const now = FUNCTIONS.CURRENT_TIMESTAMP([], [], { p, st });
  const check = cat(
    p,
    ` SEMI JOIN (SELECT 1) AS __time_travel_${++st.unnestCount} ON bq_time_travel((`,
    instant,
    `), ${created}, `,
    now,
    ') ',
  );
  return { out: check, last: end - 1, from: IN_FROM };
}

/** Words that end the expression of `FOR SYSTEM_TIME AS OF` in a FROM clause. */
const TRAVEL_END = [...FROM_ENDERS, 'JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS', 'ON', 'USING', 'TABLESAMPLE', 'PIVOT', 'UNPIVOT'];
/** Keywords that end a SELECT AS STRUCT list. */
const SELECT_LIST_ENDERS = new Set(['FROM', ...FROM_ENDERS]);

// ---------------------------------------------------------------------------------------------------------
// The rewrite

const NONE = 0;
const EXPECT_TABLE = 1;
const IN_FROM = 2;

/**
 * Rewrites a node sequence (one statement, or the inside of a group), pipe syntax and quantified LIKE first
 * restated by dialect-desugar.mjs.
 * @param {Node[]} source
 * @param {RewriteState} st
 * @returns {Piece[]}
 */
export function rwSeq(source, st) {
  const nodes = desugar(source);
  /** @type {Piece[]} */
  const out = [];
  let from = NONE;
  /** @type {Node | null} */
  let prev = null;
  // Names seen in this FROM clause, so `alias.array_column` in a table position reads as an implicit UNNEST.
  const aliases = new Set();
  // Select-list stars of this query level, so a wildcard table's _TABLE_SUFFIX can be kept out of them.
  /** @type {Star[]} */
  const stars = [];
  /** @type {string | null} */
  let lastName = null;
  const outerWildcard = st.wildcard;
  st.wildcard = null;
  for (let i = 0; i < nodes.length; i++) {
    const nd = nodes[i];
    if (isTrivia(nd)) {
      out.push(...trivia(nd.tok));
      continue;
    }
    if (nd.k === 'group') {
      if (nd.open === '[') out.push(...rwBracket(nd, prev, st));
      else {
        const star = stars[stars.length - 1];
        if (star?.except && isWord(prev ?? undefined, 'EXCEPT') && star.exceptAt === -1) star.exceptAt = out.length;
        out.push(...cat(nd.p, '(', rwSeq(nd.kids, st), ')'));
        if (from === EXPECT_TABLE) from = IN_FROM;
      }
      prev = nd;
      continue;
    }
    const t = nd.tok;
    if (t.type === 'op' && t.text === '*' && from === NONE) {
      if (
        isWord(prev ?? undefined, 'SELECT') ||
        isWord(prev ?? undefined, 'DISTINCT') ||
        isWord(prev ?? undefined, 'ALL') ||
        isOp(prev ?? undefined, ',')
      ) {
        stars.push({ node: nd, at: out.length, qualifier: null, except: false, exceptAt: -1 });
      } else if (isOp(prev ?? undefined, '.') && lastName !== null) {
        stars.push({ node: nd, at: out.length, qualifier: lastName, except: false, exceptAt: -1 });
      }
    }
    if (t.type === 'str') out.push(...text(duckString(t.value), t.p));
    else if (t.type === 'bytes') out.push(...text(`unhex('${Buffer.from(t.bytes ?? []).toString('hex')}')`, t.p));
    else if (t.type === 'num')
      out.push(...text(/^[0-9.]*[.eE]/.test(t.text) && !/^0[xX]/.test(t.text) ? `CAST(${t.text} AS DOUBLE)` : t.text, t.p));
    else if (t.type === 'param') throw new DialectError('Query parameters are not supported by the local warehouse', t.p);
    else if (t.type === 'op') {
      out.push(...text(t.text, t.p));
      if (t.text === ',' && from !== NONE) from = EXPECT_TABLE;
    }
    if (t.type !== 'id' && t.type !== 'qid') {
      prev = nd;
    } else {
      // Identifier or keyword.
      const r = rwWord(nodes, i, st, { from, prev, aliases });
      out.push(...r.out);
      const star = stars[stars.length - 1];
      if (star && star.node === prev && t.type === 'id' && t.text.toUpperCase() === 'EXCEPT') star.except = true;
      lastName = r.last === i && t.type === 'id' ? t.text.toLowerCase() : t.type === 'qid' ? (t.value ?? '').toLowerCase() : null;
      if (st.wildcard !== null && st.wildcard.alias === undefined) st.wildcard = { alias: wildcardAlias(nodes, r.last) };
      from = r.from;
      i = r.last;
      prev = nodes[r.last];
    }
  }
  if (st.wildcard) excludeTableSuffix(out, stars, st.wildcard.alias);
  st.wildcard = outerWildcard;
  return out;
}

/**
 * @typedef {{ node: Node, at: number, qualifier: string | null, except: boolean, exceptAt: number }} Star  a
 *   select-list `*` or `x.*`: the index of its piece in the output, and of the `(` of an EXCEPT list following it
 */

/**
 * `_TABLE_SUFFIX` is a pseudo column: BigQuery's `SELECT *` over a wildcard table does not return it. The expansion
 * has it as a real column, so this query level's unqualified stars (and those qualified by the wildcard's alias)
 * exclude it: `*` -> `* EXCLUDE ("_TABLE_SUFFIX")`, `* EXCEPT (a)` -> `* EXCLUDE ("_TABLE_SUFFIX", a)`.
 */
function excludeTableSuffix(out, stars, alias) {
  for (const star of stars) {
    if (star.qualifier !== null && star.qualifier !== alias) continue;
    if (star.exceptAt >= 0) out[star.exceptAt] = { ...out[star.exceptAt], s: `(${duckIdent(TABLE_SUFFIX)}, ` };
    else out[star.at] = { ...out[star.at], s: `* EXCLUDE (${duckIdent(TABLE_SUFFIX)})` };
  }
}

/** The range variable after a table path ending at nodes[last]: `AS x` or `x`, lowercased; null when none. */
function wildcardAlias(nodes, last) {
  let k = nextSig(nodes, last + 1);
  if (isWord(nodes[k], 'AS')) k = nextSig(nodes, k + 1);
  const tok = nodes[k]?.k === 'tok' ? nodes[k].tok : null;
  if (!tok || (tok.type !== 'id' && tok.type !== 'qid')) return null;
  if (tok.type === 'id' && (NOT_FUNCTIONS.has(tok.text.toUpperCase()) || FROM_ENDERS.has(tok.text.toUpperCase()))) return null;
  return tok.type === 'qid' ? tok.value.toLowerCase() : tok.text.toLowerCase();
}

function trivia(tok) {
  // Comments never reach DuckDB: each becomes one space (plus the line breaks it held, so line numbers stay). DuckDB
  // would otherwise end them by its own rules, and it parses long runs of comments in quadratic time.
  if (tok.type === 'comment') return text(` ${tok.text.replace(/[^\n]/g, '')}`, tok.p);
  return text(tok.text, tok.p);
}

/**
 * Rewrites the word at nodes[i] (and whatever it governs). Returns the index of the last node consumed.
 * @returns {{ out: Piece[], last: number, from: number }}
 */
function rwWord(nodes, i, st, { from, prev, aliases }) {
  const t = nodes[i].tok;
  const upper = t.type === 'id' ? t.text.toUpperCase() : '';
  const j = nextSig(nodes, i + 1);
  const next = nodes[j];
  const done = (out, last = i, nextFrom = from) => ({ out, last, from: nextFrom });

  if (t.type === 'id') {
    // Clause bookkeeping for table positions.
    if (upper === 'FROM' && !isWord(prev, 'DISTINCT')) return done(text(t.text, t.p), i, EXPECT_TABLE);
    if (upper === 'JOIN') return done(text(t.text, t.p), i, EXPECT_TABLE);
    if (upper === 'ON' || upper === 'USING') return done(text(t.text, t.p), i, from === NONE ? NONE : IN_FROM);
    if (upper === 'EXCEPT' && isOp(prev, '*') && isGroup(next)) return done(text('EXCLUDE', t.p), i, from);
    if ((upper === 'UNION' || upper === 'INTERSECT' || upper === 'EXCEPT') && isWord(next, 'DISTINCT')) {
      // DuckDB's set operations are DISTINCT by default and do not accept the keyword.
      return done(text(t.text, t.p), j, NONE);
    }
    if (upper === 'SELECT' && isWord(next, 'AS')) {
      const k = nextSig(nodes, j + 1);
      if (isWord(nodes[k], 'STRUCT')) return selectAsStruct(nodes, i, k, st);
      if (isWord(nodes[k], 'VALUE')) return done(text('SELECT', t.p), k, NONE);
    }
    if (FROM_ENDERS.has(upper)) return done(text(t.text, t.p), i, NONE);
    if (upper === 'IN' && isWord(next, 'UNNEST')) {
      const k = nextSig(nodes, j + 1);
      if (isGroup(nodes[k])) return done(cat(t.p, 'IN (SELECT unnest(', rwSeq(nodes[k].kids, st), '))'), k);
    }
    if (upper === 'INTERVAL') return interval(nodes, i, st, from);
    if (upper === 'FOR' && isWord(next, 'SYSTEM_TIME') && from !== NONE) return timeTravel(nodes, i, j, st);
    if (upper === 'COLLATE' && next?.k === 'tok' && next.tok.type === 'str') return done(text(collation([next], t.p), t.p), j);
    if (next?.k === 'tok' && next.tok.type === 'str' && upper in TYPED_LITERALS) {
      return done(text(TYPED_LITERALS[upper](next.tok.value), t.p), j);
    }
    if (
      (upper === 'CURRENT_DATE' || upper === 'CURRENT_DATETIME' || upper === 'CURRENT_TIME' || upper === 'CURRENT_TIMESTAMP') &&
      !isGroup(next)
    ) {
      return done(
        text(
          FUNCTIONS[upper]([], [], { p: t.p, st })
            .map((x) => x.s)
            .join(''),
          t.p,
        ),
      );
    }
    if ((upper === 'ARRAY' || upper === 'STRUCT') && isOp(next, '<')) return typedConstructor(nodes, i, j, st, from);
    if (upper === 'UNNEST' && from === EXPECT_TABLE && isGroup(next)) return unnestTable(nodes, i, j, st);
    if (NOT_FUNCTIONS.has(upper) || upper === 'NOT' || upper === 'AND' || upper === 'OR') return done(text(t.text, t.p));
  }

  // A path: a.b.c, `a.b.c`, `a`.b, and in table position service-v1.ds.t with unquoted hyphens.
  const path = readPath(nodes, i, from === EXPECT_TABLE);
  const k = nextSig(nodes, path.last + 1);
  if (isGroup(nodes[k])) {
    return done(functionCall(path, nodes[k], st), k, from === EXPECT_TABLE ? IN_FROM : from);
  }
  if (from === EXPECT_TABLE) {
    const head = path.parts[0].name.toLowerCase();
    if (path.parts.length >= 2 && aliases.has(head) && !st.datasets.has(head)) {
      // BigQuery's correlated array path: FROM t, t.items AS item  ==  FROM t, UNNEST(t.items) AS item
      const arg = joinPieces(
        path.parts.map((pt) => text(pt.quoted ? duckIdent(pt.name) : pt.name, pt.p)),
        '.',
        t.p,
      );
      return unnestFrom(nodes, arg, path.last, t.p, st);
    }
    // A table is its own range variable too: FROM t, t.arr
    aliases.add(path.parts[path.parts.length - 1].name.toLowerCase());
    return done(tablePath(path, st), path.last, IN_FROM);
  }
  if (from === IN_FROM && path.parts.length === 1) aliases.add(path.parts[0].name.toLowerCase());
  return done(
    joinPieces(
      path.parts.map((pt) => text(pt.quoted ? duckIdent(pt.name) : pt.name, pt.p)),
      '.',
      t.p,
    ),
    path.last,
  );
}

/**
 * @returns {{ parts: { name: string, quoted: boolean, p: number }[], last: number }}
 */
function readPath(nodes, i, tablePosition) {
  const parts = [];
  let k = i;
  const addToken = (tok) => {
    if (tok.type === 'qid') {
      // One backtick token may hold a whole path: `service-v1.ds.t`.
      for (const name of tok.value.split('.')) parts.push({ name, quoted: true, p: tok.p });
    } else parts.push({ name: tok.text, quoted: false, p: tok.p });
  };
  for (;;) {
    const tok = nodes[k].tok;
    if (tablePosition && tok.type === 'id') {
      // Unquoted project names may contain hyphens in table paths: service-v1.ds.t, my-proj-123.ds.t
      let name = tok.text;
      let m = k;
      while (
        isOp(nodes[m + 1], '-') &&
        nodes[m + 2]?.k === 'tok' &&
        (nodes[m + 2].tok.type === 'id' || nodes[m + 2].tok.type === 'num') &&
        nodes[m + 1].tok.p === nodes[m].tok.e &&
        nodes[m + 2].tok.p === nodes[m + 1].tok.e
      ) {
        const piece = nodes[m + 2].tok.text;
        m += 2;
        if (piece.endsWith('.')) {
          // The number token swallowed the path dot: my-proj-123.ds.t
          name += `-${piece.slice(0, -1)}`;
          parts.push({ name, quoted: true, p: tok.p });
          k = m;
          name = null;
          break;
        }
        name += `-${piece}`;
      }
      if (name === null) {
        const nx = nodes[k + 1];
        if (nx?.k === 'tok' && (nx.tok.type === 'id' || nx.tok.type === 'qid')) {
          k += 1;
          continue;
        }
        return { parts, last: k };
      }
      parts.push({ name, quoted: m !== k, p: tok.p });
      k = m;
    } else addToken(tok);
    const dot = nodes[k + 1];
    const after = nodes[k + 2];
    if (isOp(dot, '.') && after?.k === 'tok' && (after.tok.type === 'id' || after.tok.type === 'qid')) {
      k += 2;
      continue;
    }
    return { parts, last: k };
  }
}

/** A table reference in FROM/JOIN: fully qualified against the job's project, INFORMATION_SCHEMA mapped. */
function tablePath(path, st) {
  let names = path.parts.map((pt) => pt.name);
  const p = path.parts[0].p;
  const isIdx = names.length >= 3 ? names.length - 2 : -1;
  if (isIdx >= 0 && names[isIdx].toUpperCase() === 'INFORMATION_SCHEMA') {
    names = [...names.slice(0, isIdx), `INFORMATION_SCHEMA.${names[isIdx + 1].toUpperCase()}`];
  }
  if (names.length === 2 && st.datasets.has(names[0].toLowerCase())) names = [st.project, ...names];
  if (names.length === 3 && names[2].endsWith('*') && names[0] === st.project) {
    const expanded = wildcardTable(names[1], names[2].slice(0, -1), st);
    if (expanded !== null) return text(expanded, p);
  }
  if (names.length === 1 && !path.parts[0].quoted) return text(names[0], p);
  return text(names.map(duckIdent).join('.'), p);
}

/** The pseudo column of a wildcard table: the part of each matched table's name after the prefix. */
export const TABLE_SUFFIX = '_TABLE_SUFFIX';
/**
 * Alias of each shard in a wildcard's expansion, so the analysis can tell the expansion's own `*` from the user's
 * (whose stars bill every column). Random per process: a query cannot name it to have its own stars go unbilled.
 */
export const WILDCARD_SHARD_ALIAS = `__wildcard_shard_${randomBytes(8).toString('hex')}`;

/**
 * A wildcard table (`project.dataset.prefix*`, https://cloud.google.com/bigquery/docs/querying-wildcard-tables): the
 * union of every table of the dataset whose name starts with the prefix, each row with its `_TABLE_SUFFIX`. Tables
 * are matched case-sensitively, as BigQuery's names are; INFORMATION_SCHEMA views never match. When nothing matches
 * (or the dataset is unknown) the path stays as written and the analysis reports it as BigQuery does (notFound).
 * Every shard is a base table of the expansion, so the dry run lists each in referencedTables, and a dataset the
 * account may not read is refused shard by shard.
 * @returns {string | null}
 */
function wildcardTable(dataset, prefix, st) {
  if (prefix.includes('*')) return null;
  const shards = st
    .tablesOf(dataset)
    .filter((t) => t.startsWith(prefix) && !t.includes('.'))
    .sort();
  if (shards.length === 0) return null;
  const selects = shards.map(
    (t) =>
      `SELECT *, ${duckString(t.slice(prefix.length))} AS ${duckIdent(TABLE_SUFFIX)} ` +
      `FROM ${[st.project, dataset, t].map(duckIdent).join('.')} AS ${duckIdent(WILDCARD_SHARD_ALIAS)}`,
  );
  // A query level that reads a wildcard keeps _TABLE_SUFFIX out of its stars (rwSeq reads the alias next).
  st.wildcard = { alias: undefined };
  return `(${selects.join(' UNION ALL BY NAME ')})`;
}

/** `UNNEST(e) [AS] x [WITH OFFSET [AS] o]` in a FROM clause. */
function unnestTable(nodes, i, j, st) {
  return unnestFrom(nodes, rwSeq(nodes[j].kids, st), j, nodes[i].tok.p, st);
}

/** The alias and offset clauses after an UNNEST source (ending at nodes[j]) whose array is `arg`. */
function unnestFrom(nodes, arg, j, p, st) {
  let k = nextSig(nodes, j + 1);
  let alias = null;
  if (isWord(nodes[k], 'AS')) k = nextSig(nodes, k + 1);
  const cand = nodes[k];
  if (
    cand?.k === 'tok' &&
    (cand.tok.type === 'qid' ||
      (cand.tok.type === 'id' &&
        !KEYWORDS.has(cand.tok.text.toUpperCase()) &&
        !FROM_ENDERS.has(cand.tok.text.toUpperCase()) &&
        !['WITH', 'CROSS', 'LEFT', 'RIGHT', 'INNER', 'FULL', 'JOIN', 'ON'].includes(cand.tok.text.toUpperCase())))
  ) {
    alias = cand.tok.type === 'qid' ? cand.tok.value : cand.tok.text;
  }
  let last = alias ? k : j;
  let offset = null;
  const w = nextSig(nodes, last + 1);
  if (isWord(nodes[w], 'WITH') && isWord(nodes[nextSig(nodes, w + 1)], 'OFFSET')) {
    let m = nextSig(nodes, w + 1);
    last = m;
    offset = 'offset';
    let a = nextSig(nodes, m + 1);
    if (isWord(nodes[a], 'AS')) a = nextSig(nodes, a + 1);
    const on = nodes[a];
    if (
      on?.k === 'tok' &&
      (on.tok.type === 'qid' ||
        (on.tok.type === 'id' && !KEYWORDS.has(on.tok.text.toUpperCase()) && !FROM_ENDERS.has(on.tok.text.toUpperCase())))
    ) {
      offset = on.tok.type === 'qid' ? on.tok.value : on.tok.text;
      last = a;
    }
  }
  const n = ++st.unnestCount;
  if (offset !== null) {
    const value = duckIdent(alias ?? 'f0_');
    return {
      out: cat(p, '(SELECT unnest(', arg, `) AS ${value}, generate_subscripts(`, arg, `, 1) - 1 AS ${duckIdent(offset)}) AS _unnest_${n}`),
      last,
      from: IN_FROM,
    };
  }
  if (alias !== null) return { out: cat(p, 'UNNEST(', arg, `) AS _unnest_${n}(${duckIdent(alias)})`), last, from: IN_FROM };
  return { out: cat(p, 'UNNEST(', arg, ')'), last: j, from: IN_FROM };
}

/** `INTERVAL expr PART` -> `INTERVAL (expr) PART` (DuckDB only accepts a literal or a parenthesised expression). */
function interval(nodes, i, st, from) {
  const p = nodes[i].tok.p;
  const j = nextSig(nodes, i + 1);
  if (nodes[j]?.k === 'tok' && nodes[j].tok.type === 'str')
    return { out: cat(p, 'INTERVAL ', duckString(nodes[j].tok.value)), last: j, from };
  let k = j;
  while (k < nodes.length && !(nodes[k].k === 'tok' && nodes[k].tok.type === 'id' && DATE_PARTS.has(nodes[k].tok.text.toUpperCase()))) k++;
  if (k >= nodes.length) throw new DialectError('Syntax error: Expected an INTERVAL date part', p);
  const expr = trimWs(nodes.slice(j, k));
  return { out: cat(p, 'INTERVAL (', rwSeq(expr, st), `) ${nodes[k].tok.text.toUpperCase()}`), last: k, from };
}

/** `arr[OFFSET(i)]`, `arr[ORDINAL(i)]`, `arr[SAFE_OFFSET(i)]`, `arr[i]` (BigQuery: 0-based), or an array literal. */
function rwBracket(nd, prev, st) {
  const subscript =
    prev &&
    (prev.k === 'group' ||
      (prev.k === 'tok' && (prev.tok.type === 'qid' || (prev.tok.type === 'id' && !KEYWORDS.has(prev.tok.text.toUpperCase())))));
  if (!subscript) return cat(nd.p, '[', rwSeq(nd.kids, st), ']');
  const s = sig(nd.kids);
  if (s.length === 2 && isWord(s[0], 'OFFSET', 'SAFE_OFFSET', 'ORDINAL', 'SAFE_ORDINAL') && isGroup(s[1])) {
    const zeroBased = isWord(s[0], 'OFFSET', 'SAFE_OFFSET');
    const inner = rwSeq(s[1].kids, st);
    return zeroBased ? cat(nd.p, '[(', inner, ') + 1]') : cat(nd.p, '[', inner, ']');
  }
  if (s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str') return cat(nd.p, '[', rwSeq(nd.kids, st), ']');
  return cat(nd.p, '[(', rwSeq(nd.kids, st), ') + 1]');
}

/**
 * `SELECT AS STRUCT a, b AS c FROM ...` -> `SELECT struct_pack(a := a, c := b) FROM ...`. A star item (`t.*`, or a
 * STRUCT column's `s.*`) is every field of that row or struct, in order, as BigQuery expands it: DuckDB names a
 * range variable's whole row by its alias (a STRUCT), so `t.*` becomes `t`, and the runs of named items between
 * stars are joined to it with `struct_concat`, keeping BigQuery's field order.
 */
function selectAsStruct(nodes, i, structIdx, st) {
  const p = nodes[i].tok.p;
  let end = structIdx + 1;
  const ends = (k) => nodes[k].k === 'tok' && nodes[k].tok.type === 'id' && SELECT_LIST_ENDERS.has(nodes[k].tok.text.toUpperCase());
  // `t.* EXCEPT (a)` is the star's own EXCEPT, not the set operation that ends the list.
  const starsExcept = (k) =>
    isWord(nodes[k], 'EXCEPT') && isOp(sig(nodes.slice(structIdx + 1, k)).at(-1), '*') && isGroup(nodes[nextSig(nodes, k + 1)]);
  while (end < nodes.length && !(ends(end) && !starsExcept(end))) end++;
  const items = splitArgs(nodes.slice(structIdx + 1, end));
  /** @type {Piece[][]} */
  const parts = [];
  /** @type {Piece[][]} */
  let named = [];
  const flush = () => {
    if (named.length > 0) parts.push(cat(p, 'struct_pack(', joinPieces(named, ', ', p), ')'));
    named = [];
  };
  items.forEach((item, idx) => {
    const row = starRow(item, p);
    if (row) {
      flush();
      parts.push(rwSeq(row, st));
      return;
    }
    const { expr, name } = aliasOf(item, idx);
    named.push(cat(p, `${duckIdent(name)} := `, rwSeq(expr, st)));
  });
  flush();
  const struct = parts.length === 1 ? parts[0] : cat(p, 'struct_concat(', joinPieces(parts, ', ', p), ')');
  return { out: cat(p, 'SELECT ', struct, ' '), last: end - 1, from: NONE };
}

/**
 * The row or struct a `SELECT AS STRUCT` star item expands (`t.*` -> the nodes of `t`), or null for any other item.
 * What the local warehouse cannot restate is refused by name rather than run wrong: a bare `*` (DuckDB has no name for
 * the FROM clause's whole row without an alias) and a star with `EXCEPT`/`REPLACE`.
 */
function starRow(item, p) {
  const s = sig(item);
  const at = s.findIndex((nd) => isOp(nd, '*'));
  if (at === -1 || (at > 0 && !isOp(s[at - 1], '.'))) return null; // no star, or a multiplication
  if (at < s.length - 1) {
    throw new DialectError('the local warehouse does not run SELECT AS STRUCT with a star and EXCEPT or REPLACE; list the fields', p);
  }
  if (at === 0) throw new DialectError('the local warehouse runs SELECT AS STRUCT * only with a table alias: FROM x AS t, then t.*', p);
  return item.slice(0, item.indexOf(s[at - 1]));
}

/** `ARRAY<T>[...]` and `STRUCT<a T, ...>(...)`. */
function typedConstructor(nodes, i, ltIdx, st, from) {
  const p = nodes[i].tok.p;
  const flat = flattenTypeTokens(nodes, i);
  const parsed = parseType(flat.tokens, 0);
  const after = flat.endNode;
  const k = nextSig(nodes, after + 1);
  const body = nodes[k];
  if (parsed.bq === 'ARRAY') {
    if (!isGroup(body, '[')) throw new DialectError('Syntax error: Expected "[" after ARRAY<...>', p);
    return { out: cat(p, 'CAST([', rwSeq(body.kids, st), `] AS ${parsed.duck})`), last: k, from };
  }
  if (!isGroup(body)) throw new DialectError('Syntax error: Expected "(" after STRUCT<...>', p);
  const args = splitArgs(body.kids);
  const fields = args.map((arg, idx) => {
    const f = parsed.fields?.[idx];
    if (!f) throw new DialectError('STRUCT type has fewer fields than values', body.p);
    return cat(p, `${duckIdent(f.name)} := CAST(`, rwSeq(arg, st), ` AS ${f.duck})`);
  });
  return { out: cat(p, 'struct_pack(', joinPieces(fields, ', ', p), ')'), last: k, from };
}

const TYPED_LITERALS = {
  DATE: (v) => `DATE ${duckString(v)}`,
  DATETIME: (v) => `TIMESTAMP ${duckString(v)}`,
  TIMESTAMP: (v) => `TIMESTAMPTZ ${duckString(v)}`,
  TIME: (v) => `TIME ${duckString(v)}`,
  NUMERIC: (v) => `CAST(${duckString(v)} AS DECIMAL(38,9))`,
  BIGNUMERIC: (v) => `CAST(${duckString(v)} AS DECIMAL(38,18))`,
  DECIMAL: (v) => `CAST(${duckString(v)} AS DECIMAL(38,9))`,
  BIGDECIMAL: (v) => `CAST(${duckString(v)} AS DECIMAL(38,18))`,
  JSON: (v) => `CAST(${duckString(v)} AS JSON)`,
};
