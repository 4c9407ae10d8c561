// BigQuery GoogleSQL -> DuckDB rewrite, token by token. Only what commonly differs is rewritten; the
// rest is handed to DuckDB as written. String literals and comments are never rewritten inside: the
// tokenizer reads them whole, decodes BigQuery's escapes and re-emits them in DuckDB's quoting.
// Every emitted piece remembers the offset of the source token it came from, so DuckDB's error
// positions can be reported against the user's own SQL.

export class DialectError extends Error {
  /** @param {string} message BigQuery-style message, without position @param {number} offset in the source */
  constructor(message, offset) {
    super(message);
    this.offset = offset;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Tokens

/**
 * @typedef {{ type: 'ws'|'comment'|'str'|'bytes'|'id'|'qid'|'num'|'param'|'op', text: string, value?: string,
 *   bytes?: number[], p: number, e: number }} Token
 */

const SIMPLE_ESCAPES = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '?': '?', '"': '"', "'": "'", '`': '`' };
const TWO_CHAR_OPS = new Set(['<=', '>=', '<>', '!=', '||', '<<', '>>', '=>']);

/** @returns {Token[]} */
export function tokenize(sql) {
  const toks = [];
  let i = 0;
  const n = sql.length;
  const push = (type, start, extra = {}) => toks.push({ type, text: sql.slice(start, i), p: start, e: i, ...extra });
  while (i < n) {
    const c = sql[i];
    const start = i;
    if (/\s/.test(c)) {
      while (i < n && /\s/.test(sql[i])) i++;
      push('ws', start);
    } else if (c === '#' || (c === '-' && sql[i + 1] === '-')) {
      while (i < n && sql[i] !== '\n') i++;
      push('comment', start);
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new DialectError('Syntax error: Unclosed comment', start);
      i = end + 2;
      push('comment', start);
    } else if (c === '`') {
      let v = '';
      i++;
      while (i < n && sql[i] !== '`') {
        if (sql[i] === '\\' && i + 1 < n) {
          v += SIMPLE_ESCAPES[sql[i + 1]] ?? sql[i + 1];
          i += 2;
        } else v += sql[i++];
      }
      if (i >= n) throw new DialectError('Syntax error: Unclosed identifier literal', start);
      i++;
      push('qid', start, { value: v });
    } else if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_]/.test(sql[i])) i++;
      const word = sql.slice(start, i);
      if (/^(r|b|rb|br)$/i.test(word) && (sql[i] === "'" || sql[i] === '"')) {
        const raw = /r/i.test(word);
        const isBytes = /b/i.test(word);
        const lit = readString(sql, i, raw, start);
        i = lit.end;
        if (isBytes) push('bytes', start, { bytes: lit.bytes });
        else push('str', start, { value: lit.value });
      } else push('id', start);
    } else if (c === "'" || c === '"') {
      const lit = readString(sql, i, false, start);
      i = lit.end;
      push('str', start, { value: lit.value });
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      const m = /^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/.exec(sql.slice(i));
      i += m[0].length;
      push('num', start);
    } else if (c === '@') {
      i++;
      if (sql[i] === '@') i++;
      while (i < n && /[A-Za-z0-9_]/.test(sql[i])) i++;
      push('param', start);
    } else {
      const two = sql.slice(i, i + 2);
      i += TWO_CHAR_OPS.has(two) ? 2 : 1;
      push('op', start);
    }
  }
  return toks;
}

/** Reads a quoted literal starting at the quote; decodes escapes unless raw. */
function readString(sql, q0, raw, tokenStart) {
  const q = sql[q0];
  const triple = sql.startsWith(q.repeat(3), q0);
  let i = q0 + (triple ? 3 : 1);
  /** @type {number[]} */
  const bytes = [];
  let value = '';
  const addText = (s) => {
    value += s;
    for (const b of Buffer.from(s, 'utf8')) bytes.push(b);
  };
  for (;;) {
    if (i >= sql.length) throw new DialectError('Syntax error: Unclosed string literal', tokenStart);
    const c = sql[i];
    if (triple ? sql.startsWith(q.repeat(3), i) : c === q) {
      i += triple ? 3 : 1;
      break;
    }
    if (!triple && c === '\n') throw new DialectError('Syntax error: Unclosed string literal', tokenStart);
    if (c === '\\') {
      const d = sql[i + 1];
      if (d === undefined) throw new DialectError('Syntax error: Unclosed string literal', tokenStart);
      if (raw) {
        addText(c + d);
        i += 2;
        continue;
      }
      if (d in SIMPLE_ESCAPES) {
        addText(SIMPLE_ESCAPES[d]);
        i += 2;
      } else if (d === 'x' || d === 'X') {
        const h = sql.slice(i + 2, i + 4);
        if (!/^[0-9a-fA-F]{2}$/.test(h)) throw new DialectError('Syntax error: Illegal escape sequence: \\x', i);
        const b = parseInt(h, 16);
        value += String.fromCharCode(b);
        bytes.push(b);
        i += 4;
      } else if (d === 'u' || d === 'U') {
        const len = d === 'u' ? 4 : 8;
        const h = sql.slice(i + 2, i + 2 + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) throw new DialectError(`Syntax error: Illegal escape sequence: \\${d}`, i);
        addText(String.fromCodePoint(parseInt(h, 16)));
        i += 2 + len;
      } else if (/[0-7]/.test(d)) {
        const o = sql.slice(i + 1, i + 4);
        if (!/^[0-7]{3}$/.test(o)) throw new DialectError('Syntax error: Illegal escape sequence: octal escapes need 3 digits', i);
        const b = parseInt(o, 8);
        value += String.fromCharCode(b);
        bytes.push(b);
        i += 4;
      } else {
        throw new DialectError(`Syntax error: Illegal escape sequence: \\${d}`, i);
      }
      continue;
    }
    addText(c);
    i++;
  }
  return { value, bytes, end: i };
}

// ---------------------------------------------------------------------------------------------------------
// Tree: parentheses and brackets become groups; everything else stays a flat token list.

/**
 * @typedef {{ k: 'tok', tok: Token } | { k: 'group', open: '('|'[', kids: Node[], p: number, e: number }} Node
 */

/** @returns {Node[]} */
function buildTree(tokens) {
  const root = { kids: [] };
  const stack = [root];
  for (const tok of tokens) {
    if (tok.type === 'op' && (tok.text === '(' || tok.text === '[')) {
      const g = { k: 'group', open: tok.text, kids: [], p: tok.p, e: tok.e };
      stack[stack.length - 1].kids.push(g);
      stack.push(g);
    } else if (tok.type === 'op' && (tok.text === ')' || tok.text === ']')) {
      const top = stack[stack.length - 1];
      const want = tok.text === ')' ? '(' : '[';
      if (stack.length === 1 || top.open !== want) throw new DialectError(`Syntax error: Unexpected "${tok.text}"`, tok.p);
      top.e = tok.e;
      stack.pop();
    } else {
      stack[stack.length - 1].kids.push({ k: 'tok', tok });
    }
  }
  if (stack.length > 1) {
    const open = stack[stack.length - 1];
    throw new DialectError(`Syntax error: Expected "${open.open === '(' ? ')' : ']'}" but got end of statement`, open.p);
  }
  return root.kids;
}

const isTrivia = (nd) => nd.k === 'tok' && (nd.tok.type === 'ws' || nd.tok.type === 'comment');
const isWord = (nd, ...words) => nd?.k === 'tok' && nd.tok.type === 'id' && words.includes(nd.tok.text.toUpperCase());
const isOp = (nd, text) => nd?.k === 'tok' && nd.tok.type === 'op' && nd.tok.text === text;
const isGroup = (nd, open = '(') => nd?.k === 'group' && nd.open === open;
const nodePos = (nd) => (nd.k === 'tok' ? nd.tok.p : nd.p);

function nextSig(nodes, i) {
  let j = i;
  while (j < nodes.length && isTrivia(nodes[j])) j++;
  return j;
}

/** Splits a node list on top-level commas; whitespace around each argument is dropped (comments stay). */
function splitArgs(nodes) {
  const args = [[]];
  for (const nd of nodes) {
    if (isOp(nd, ',')) args.push([]);
    else args[args.length - 1].push(nd);
  }
  if (args.length === 1 && args[0].every(isTrivia)) return [];
  return args.map(trimWs);
}

const isWs = (nd) => nd.k === 'tok' && nd.tok.type === 'ws';

function trimWs(nodes) {
  let a = 0;
  let b = nodes.length;
  while (a < b && isWs(nodes[a])) a++;
  while (b > a && isWs(nodes[b - 1])) b--;
  return nodes.slice(a, b);
}

const sig = (nodes) => nodes.filter((nd) => !isTrivia(nd));

// ---------------------------------------------------------------------------------------------------------
// Output pieces: text plus the source offset it stands for.

/** @typedef {{ s: string, p: number }} Piece */

/** @returns {Piece[]} */
function text(s, p) {
  return [{ s, p }];
}

/** Concatenates pieces and strings (strings take the position of the first piece or `p`). */
function cat(p, ...items) {
  /** @type {Piece[]} */
  const out = [];
  for (const it of items) {
    if (typeof it === 'string') out.push({ s: it, p });
    else out.push(...it);
  }
  return out;
}

/** Joins piece lists with a separator. */
function joinPieces(list, sep, p) {
  /** @type {Piece[]} */
  const out = [];
  list.forEach((x, idx) => {
    if (idx) out.push({ s: sep, p });
    out.push(...x);
  });
  return out;
}

export function duckString(s) {
  return `'${s.replaceAll("'", "''")}'`;
}

export function duckIdent(s) {
  return `"${s.replaceAll('"', '""')}"`;
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary

const DATE_PARTS = new Set([
  'MICROSECOND', 'MILLISECOND', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'DAYOFWEEK', 'DAYOFYEAR', 'WEEK', 'ISOWEEK',
  'MONTH', 'QUARTER', 'YEAR', 'ISOYEAR', 'DATE', 'TIME', 'DATETIME',
]);
const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

/** Keywords that may be followed by "(" without being a function call. */
const NOT_FUNCTIONS = new Set([
  'AS', 'IN', 'EXISTS', 'OVER', 'FROM', 'JOIN', 'ON', 'USING', 'AND', 'OR', 'NOT', 'WHEN', 'THEN', 'ELSE', 'SELECT',
  'WITH', 'UNION', 'ALL', 'DISTINCT', 'BY', 'WINDOW', 'QUALIFY', 'WHERE', 'HAVING', 'VALUES', 'RECURSIVE', 'LATERAL',
  'IS', 'LIKE', 'BETWEEN', 'CASE', 'END', 'ANY', 'SOME', 'PARTITION', 'ORDER', 'ROWS', 'RANGE', 'INTERSECT',
  'EXCEPT', 'LIMIT', 'OFFSET', 'GROUP', 'CROSS', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'OUTER', 'TABLESAMPLE',
  'PRECEDING', 'FOLLOWING', 'CURRENT', 'UNBOUNDED', 'ASC', 'DESC', 'NULLS', 'FIRST', 'LAST', 'INTERVAL', 'RETURNS',
]);

/** Words after which "[" starts an array literal rather than a subscript. */
const KEYWORDS = new Set([...NOT_FUNCTIONS, 'IF', 'NULL', 'TRUE', 'FALSE', 'ARRAY', 'STRUCT', 'UNNEST', 'RETURN']);

/** Clause keywords that end a FROM clause. */
const FROM_ENDERS = new Set(['WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'UNION', 'INTERSECT', 'EXCEPT', 'SELECT']);
/** Keywords that end a SELECT AS STRUCT list. */
const SELECT_LIST_ENDERS = new Set(['FROM', ...FROM_ENDERS]);

const SCALAR_TYPES = {
  INT64: 'BIGINT', INT: 'BIGINT', INTEGER: 'BIGINT', SMALLINT: 'BIGINT', BIGINT: 'BIGINT', TINYINT: 'BIGINT', BYTEINT: 'BIGINT',
  // BIGNUMERIC's 76 digits do not fit DuckDB's 38; scale 18 keeps it distinct from NUMERIC's 9.
  FLOAT64: 'DOUBLE', FLOAT: 'DOUBLE', NUMERIC: 'DECIMAL(38,9)', DECIMAL: 'DECIMAL(38,9)', BIGNUMERIC: 'DECIMAL(38,18)',
  BIGDECIMAL: 'DECIMAL(38,18)', STRING: 'VARCHAR', BYTES: 'BLOB', BOOL: 'BOOLEAN', BOOLEAN: 'BOOLEAN', DATE: 'DATE',
  DATETIME: 'TIMESTAMP', TIMESTAMP: 'TIMESTAMPTZ', TIME: 'TIME', JSON: 'JSON', INTERVAL: 'INTERVAL',
};

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
  "CREATE OR REPLACE MACRO bq_initcap(s) AS array_to_string(list_transform(string_split(lower(s), ' '), w -> upper(w[1]) || w[2:]), ' ')",
];

// ---------------------------------------------------------------------------------------------------------
// Public entry points

/**
 * @typedef {{ project: string, datasets: Iterable<string>, today: string }} DialectContext
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
  };
  const pieces = joinPieces(statements.map((st) => rwSeq(st, state)), ';\n', 0);
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
      throw new DialectError(`Syntax error: Unexpected ${first ? `keyword ${first}` : 'token'}`, nodes.find((nd) => !isTrivia(nd)) ? nodePos(nodes.find((nd) => !isTrivia(nd))) : 0);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The rewrite

const NONE = 0;
const EXPECT_TABLE = 1;
const IN_FROM = 2;

/**
 * Rewrites a node sequence (one statement, or the inside of a group).
 * @param {Node[]} nodes
 * @returns {Piece[]}
 */
function rwSeq(nodes, st) {
  /** @type {Piece[]} */
  const out = [];
  let from = NONE;
  /** @type {Node | null} */
  let prev = null;
  // Names seen in this FROM clause, so `alias.array_column` in a table position reads as an implicit UNNEST.
  const aliases = new Set();
  for (let i = 0; i < nodes.length; i++) {
    const nd = nodes[i];
    if (isTrivia(nd)) {
      out.push(...trivia(nd.tok));
      continue;
    }
    if (nd.k === 'group') {
      if (nd.open === '[') out.push(...rwBracket(nd, prev, st));
      else {
        out.push(...cat(nd.p, '(', rwSeq(nd.kids, st), ')'));
        if (from === EXPECT_TABLE) from = IN_FROM;
      }
      prev = nd;
      continue;
    }
    const t = nd.tok;
    if (t.type === 'str') out.push(...text(duckString(t.value), t.p));
    else if (t.type === 'bytes') out.push(...text(`unhex('${Buffer.from(t.bytes).toString('hex')}')`, t.p));
    else if (t.type === 'num') out.push(...text(/^[0-9.]*[.eE]/.test(t.text) && !/^0[xX]/.test(t.text) ? `CAST(${t.text} AS DOUBLE)` : t.text, t.p));
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
      from = r.from;
      i = r.last;
      prev = nodes[r.last];
    }
  }
  return out;
}

function trivia(tok) {
  // BigQuery's "#" comments are "--" comments in DuckDB.
  if (tok.type === 'comment' && tok.text.startsWith('#')) return text(`--${tok.text.slice(1)}`, tok.p);
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
    if (next?.k === 'tok' && next.tok.type === 'str' && upper in TYPED_LITERALS) {
      return done(text(TYPED_LITERALS[upper](next.tok.value), t.p), j);
    }
    if ((upper === 'CURRENT_DATE' || upper === 'CURRENT_DATETIME' || upper === 'CURRENT_TIME' || upper === 'CURRENT_TIMESTAMP') && !isGroup(next)) {
      return done(text(FUNCTIONS[upper]([], [], { p: t.p, st }).map((x) => x.s).join(''), t.p));
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
      const arg = joinPieces(path.parts.map((pt) => text(pt.quoted ? duckIdent(pt.name) : pt.name, pt.p)), '.', t.p);
      return unnestFrom(nodes, arg, path.last, t.p, st);
    }
    // A table is its own range variable too: FROM t, t.arr
    aliases.add(path.parts[path.parts.length - 1].name.toLowerCase());
    return done(tablePath(path, st), path.last, IN_FROM);
  }
  if (from === IN_FROM && path.parts.length === 1) aliases.add(path.parts[0].name.toLowerCase());
  return done(joinPieces(path.parts.map((pt) => text(pt.quoted ? duckIdent(pt.name) : pt.name, pt.p)), '.', t.p), path.last);
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
      while (isOp(nodes[m + 1], '-') && nodes[m + 2]?.k === 'tok' && (nodes[m + 2].tok.type === 'id' || nodes[m + 2].tok.type === 'num')
        && nodes[m + 1].tok.p === nodes[m].tok.e && nodes[m + 2].tok.p === nodes[m + 1].tok.e) {
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
  if (names.length === 1 && !path.parts[0].quoted) return text(names[0], p);
  return text(names.map(duckIdent).join('.'), p);
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
  if (cand?.k === 'tok' && (cand.tok.type === 'qid' || (cand.tok.type === 'id' && !KEYWORDS.has(cand.tok.text.toUpperCase()) && !FROM_ENDERS.has(cand.tok.text.toUpperCase()) && !['WITH', 'CROSS', 'LEFT', 'RIGHT', 'INNER', 'FULL', 'JOIN', 'ON'].includes(cand.tok.text.toUpperCase())))) {
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
    if (on?.k === 'tok' && (on.tok.type === 'qid' || (on.tok.type === 'id' && !KEYWORDS.has(on.tok.text.toUpperCase()) && !FROM_ENDERS.has(on.tok.text.toUpperCase())))) {
      offset = on.tok.type === 'qid' ? on.tok.value : on.tok.text;
      last = a;
    }
  }
  const n = ++st.unnestCount;
  if (offset !== null) {
    const value = duckIdent(alias ?? 'f0_');
    return { out: cat(p, '(SELECT unnest(', arg, `) AS ${value}, generate_subscripts(`, arg, `, 1) - 1 AS ${duckIdent(offset)}) AS _unnest_${n}`), last, from: IN_FROM };
  }
  if (alias !== null) return { out: cat(p, 'UNNEST(', arg, `) AS _unnest_${n}(${duckIdent(alias)})`), last, from: IN_FROM };
  return { out: cat(p, 'UNNEST(', arg, ')'), last: j, from: IN_FROM };
}

/** `INTERVAL expr PART` -> `INTERVAL (expr) PART` (DuckDB only accepts a literal or a parenthesised expression). */
function interval(nodes, i, st, from) {
  const p = nodes[i].tok.p;
  const j = nextSig(nodes, i + 1);
  if (nodes[j]?.k === 'tok' && nodes[j].tok.type === 'str') return { out: cat(p, 'INTERVAL ', duckString(nodes[j].tok.value)), last: j, from };
  let k = j;
  while (k < nodes.length && !(nodes[k].k === 'tok' && nodes[k].tok.type === 'id' && DATE_PARTS.has(nodes[k].tok.text.toUpperCase()))) k++;
  if (k >= nodes.length) throw new DialectError('Syntax error: Expected an INTERVAL date part', p);
  const expr = trimWs(nodes.slice(j, k));
  return { out: cat(p, 'INTERVAL (', rwSeq(expr, st), `) ${nodes[k].tok.text.toUpperCase()}`), last: k, from };
}

/** `arr[OFFSET(i)]`, `arr[ORDINAL(i)]`, `arr[SAFE_OFFSET(i)]`, `arr[i]` (BigQuery: 0-based), or an array literal. */
function rwBracket(nd, prev, st) {
  const subscript = prev && (prev.k === 'group'
    || (prev.k === 'tok' && (prev.tok.type === 'qid' || (prev.tok.type === 'id' && !KEYWORDS.has(prev.tok.text.toUpperCase())))));
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

/** `SELECT AS STRUCT a, b AS c FROM ...` -> `SELECT struct_pack(a := a, c := b) FROM ...` */
function selectAsStruct(nodes, i, structIdx, st) {
  const p = nodes[i].tok.p;
  let end = structIdx + 1;
  while (end < nodes.length && !(nodes[end].k === 'tok' && nodes[end].tok.type === 'id' && SELECT_LIST_ENDERS.has(nodes[end].tok.text.toUpperCase()))) end++;
  const items = splitArgs(nodes.slice(structIdx + 1, end));
  const fields = items.map((item, idx) => {
    const { expr, name } = aliasOf(item, idx);
    return cat(p, `${duckIdent(name)} := `, rwSeq(expr, st));
  });
  return { out: cat(p, 'SELECT struct_pack(', joinPieces(fields, ', ', p), ') '), last: end - 1, from: NONE };
}

/** Splits `expr [AS] alias`; unaliased paths are named by their last part, others `_field_N`. */
function aliasOf(item, idx) {
  const s = sig(item);
  const last = s[s.length - 1];
  const beforeLast = s[s.length - 2];
  if (s.length >= 3 && isWord(beforeLast, 'AS') && last.k === 'tok' && (last.tok.type === 'id' || last.tok.type === 'qid')) {
    const cut = item.indexOf(beforeLast);
    return { expr: item.slice(0, cut), name: last.tok.type === 'qid' ? last.tok.value : last.tok.text };
  }
  const pathLike = s.length > 0 && s.every((nd, n) => (n % 2 === 0 ? nd.k === 'tok' && (nd.tok.type === 'id' || nd.tok.type === 'qid') : isOp(nd, '.')));
  if (pathLike) {
    const tok = s[s.length - 1].tok;
    return { expr: item, name: tok.type === 'qid' ? tok.value.split('.').pop() : tok.text };
  }
  return { expr: item, name: `_field_${idx + 1}` };
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
    const f = parsed.fields[idx];
    if (!f) throw new DialectError('STRUCT type has fewer fields than values', body.p);
    return cat(p, `${duckIdent(f.name)} := CAST(`, rwSeq(arg, st), ` AS ${f.duck})`);
  });
  return { out: cat(p, 'struct_pack(', joinPieces(fields, ', ', p), ')'), last: k, from };
}

/** Collects the tokens of `NAME<...>` starting at nodes[i], splitting `>>` into two `>`. */
function flattenTypeTokens(nodes, i) {
  const tokens = [];
  let depth = 0;
  let k = i;
  for (; k < nodes.length; k++) {
    const nd = nodes[k];
    if (isTrivia(nd)) continue;
    if (nd.k === 'group') {
      tokens.push({ group: nd });
      if (depth === 0) break;
      continue;
    }
    const tx = nd.tok.text;
    if (tx === '>>') {
      tokens.push({ op: '>' }, { op: '>' });
      depth -= 2;
    } else if (tx === '<' || tx === '>' || tx === ',') {
      tokens.push({ op: tx });
      depth += tx === '<' ? 1 : tx === '>' ? -1 : 0;
    } else if (nd.tok.type === 'id' || nd.tok.type === 'qid') tokens.push({ word: nd.tok.type === 'qid' ? nd.tok.value : nd.tok.text });
    else throw new DialectError(`Syntax error: Unexpected "${tx}" in type`, nd.tok.p);
    if (depth === 0 && tokens.length > 1) break;
  }
  return { tokens, endNode: k };
}

/**
 * Parses a BigQuery type from flattened tokens.
 * @returns {{ duck: string, bq: string, fields?: { name: string, duck: string }[], next: number }}
 */
function parseType(tokens, i) {
  const w = tokens[i]?.word;
  if (!w) throw new DialectError('Syntax error: Expected a type name', 0);
  const upper = w.toUpperCase();
  if (upper === 'ARRAY') {
    if (tokens[i + 1]?.op !== '<') throw new DialectError('Syntax error: Expected "<" after ARRAY', 0);
    const inner = parseType(tokens, i + 2);
    if (tokens[inner.next]?.op !== '>') throw new DialectError('Syntax error: Expected ">"', 0);
    return { duck: `${inner.duck}[]`, bq: 'ARRAY', next: inner.next + 1 };
  }
  if (upper === 'STRUCT') {
    if (tokens[i + 1]?.op !== '<') throw new DialectError('Syntax error: Expected "<" after STRUCT', 0);
    const fields = [];
    let k = i + 2;
    for (;;) {
      let name = `_field_${fields.length + 1}`;
      // `name TYPE` or just `TYPE`
      if (tokens[k]?.word && tokens[k + 1]?.word) {
        name = tokens[k].word;
        k += 1;
      } else if (tokens[k]?.word && tokens[k + 1]?.op === '<' && !['ARRAY', 'STRUCT'].includes(tokens[k].word.toUpperCase())) {
        name = tokens[k].word;
        k += 1;
      }
      const ft = parseType(tokens, k);
      fields.push({ name, duck: ft.duck });
      k = ft.next;
      if (tokens[k]?.op === ',') {
        k++;
        continue;
      }
      if (tokens[k]?.op === '>') break;
      throw new DialectError('Syntax error: Expected "," or ">" in STRUCT type', 0);
    }
    return { duck: `STRUCT(${fields.map((f) => `${duckIdent(f.name)} ${f.duck}`).join(', ')})`, bq: 'STRUCT', fields, next: k + 1 };
  }
  let duck = SCALAR_TYPES[upper];
  if (!duck) throw new DialectError(`Type not found: ${w}`, 0);
  let next = i + 1;
  const g = tokens[next]?.group;
  if (g && g.open === '(') {
    // NUMERIC(p, s) keeps its precision (capped at DuckDB's 38); STRING(n) / BYTES(n) drop the length.
    const nums = g.kids.filter((nd) => nd.k === 'tok' && nd.tok.type === 'num').map((nd) => Number(nd.tok.text));
    if (duck.startsWith('DECIMAL') && nums.length > 0) duck = `DECIMAL(${Math.min(38, nums[0])},${Math.min(nums[1] ?? 0, 38)})`;
    next++;
  }
  return { duck, bq: upper, next };
}

/** Converts the type tokens of CAST(x AS <type>) to DuckDB's spelling. */
function typeFromNodes(nodes) {
  const s = sig(nodes);
  if (s.length === 0) throw new DialectError('Syntax error: Expected a type', 0);
  const { tokens } = flattenAll(s);
  const parsed = parseType(tokens, 0);
  if (parsed.next < tokens.length) {
    const extra = tokens[parsed.next];
    if (extra.word?.toUpperCase() === 'FORMAT') throw new DialectError('CAST ... FORMAT is not supported by the local warehouse', nodePos(s[0]));
  }
  return parsed.duck;
}

function flattenAll(nodes) {
  const tokens = [];
  for (const nd of nodes) {
    if (nd.k === 'group') tokens.push({ group: nd });
    else if (nd.tok.text === '>>') tokens.push({ op: '>' }, { op: '>' });
    else if (nd.tok.type === 'op') tokens.push({ op: nd.tok.text });
    else if (nd.tok.type === 'id' || nd.tok.type === 'qid') tokens.push({ word: nd.tok.type === 'qid' ? nd.tok.value : nd.tok.text });
    else tokens.push({ op: nd.tok.text });
  }
  return { tokens };
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

// ---------------------------------------------------------------------------------------------------------
// Function calls

/**
 * @param {{ parts: { name: string, quoted: boolean, p: number }[] }} path
 * @param {Node} group the argument list
 */
function functionCall(path, group, st) {
  const p = path.parts[0].p;
  const names = path.parts.map((pt) => pt.name);
  const rawArgs = splitArgs(group.kids);
  if (names.length === 1 && !path.parts[0].quoted) {
    const upper = names[0].toUpperCase();
    const special = SPECIAL_FORMS[upper];
    if (special) return special(group, { p, st, name: names[0] });
    const fn = FUNCTIONS[upper];
    if (fn) return fn(rawArgs.map((a) => rwSeq(a, st)), rawArgs, { p, st, group });
    return cat(p, names[0], '(', rwSeq(group.kids, st), ')');
  }
  if (names.length === 2 && names[0].toUpperCase() === 'SAFE' && !path.parts[0].quoted) {
    // SAFE.fn(...) returns NULL instead of raising.
    const inner = functionCall({ parts: path.parts.slice(1) }, group, st);
    return cat(p, 'try(', inner, ')');
  }
  // A routine: project.dataset.fn(...) or dataset.fn(...)
  const full = names.length === 2 ? [st.project, ...names] : names;
  return cat(p, full.map(duckIdent).join('.'), '(', rwSeq(group.kids, st), ')');
}

/** Forms whose arguments are not a plain comma list. */
const SPECIAL_FORMS = {
  CAST: (group, c) => castForm(group, c, 'CAST'),
  SAFE_CAST: (group, c) => castForm(group, c, 'TRY_CAST'),
  EXTRACT: (group, c) => extractForm(group, c),
  ARRAY_AGG: (group, c) => aggWithModifiers(group, c, 'array_agg'),
  STRING_AGG: (group, c) => aggWithModifiers(group, c, 'string_agg'),
  STRUCT: (group, c) => {
    const items = splitArgs(group.kids);
    const fields = items.map((item, idx) => {
      const { expr, name } = aliasOf(item, idx);
      return cat(c.p, `${duckIdent(name)} := `, rwSeq(expr, c.st));
    });
    return cat(c.p, 'struct_pack(', joinPieces(fields, ', ', c.p), ')');
  },
};

function castForm(group, c, fn) {
  const kids = group.kids;
  let asIdx = -1;
  kids.forEach((nd, idx) => {
    if (isWord(nd, 'AS')) asIdx = idx;
  });
  if (asIdx < 0) throw new DialectError(`Syntax error: Expected keyword AS in ${fn === 'CAST' ? 'CAST' : 'SAFE_CAST'}`, c.p);
  const duckType = typeFromNodes(kids.slice(asIdx + 1));
  return cat(c.p, `${fn}(`, rwSeq(trimWs(kids.slice(0, asIdx)), c.st), ` AS ${duckType})`);
}

function extractForm(group, c) {
  const s = sig(group.kids);
  const fromIdx = group.kids.findIndex((nd) => isWord(nd, 'FROM'));
  if (fromIdx < 0 || s.length < 3) throw new DialectError('Syntax error: Expected EXTRACT(part FROM expression)', c.p);
  const partNodes = group.kids.slice(0, fromIdx);
  let exprNodes = group.kids.slice(fromIdx + 1);
  let tz = null;
  const atIdx = exprNodes.findIndex((nd) => isWord(nd, 'AT'));
  if (atIdx >= 0 && isWord(exprNodes[nextSig(exprNodes, atIdx + 1)], 'TIME')) {
    const zoneIdx = nextSig(exprNodes, nextSig(exprNodes, atIdx + 1) + 1);
    tz = rwSeq(exprNodes.slice(zoneIdx + 1), c.st);
    exprNodes = exprNodes.slice(0, atIdx);
  }
  let x = rwSeq(exprNodes, c.st);
  if (tz) x = cat(c.p, 'timezone(', tz, ', ', x, ')');
  const part = readPart(partNodes, c.p);
  const p = c.p;
  switch (part.name) {
    case 'DAYOFWEEK':
      return cat(p, '(dayofweek(', x, ') + 1)');
    case 'DAYOFYEAR':
      return cat(p, 'dayofyear(', x, ')');
    case 'WEEK':
      // BigQuery: weeks start on `weekday`; days before the year's first such day are week 0.
      return cat(p, `((dayofyear(`, x, `) + 6 - (dayofweek(`, x, `) - ${part.weekday} + 7) % 7) // 7)`);
    case 'ISOWEEK':
      return cat(p, 'week(', x, ')');
    case 'ISOYEAR':
      return cat(p, 'isoyear(', x, ')');
    case 'DATE':
      return cat(p, 'CAST(', x, ' AS DATE)');
    case 'TIME':
      return cat(p, 'CAST(', x, ' AS TIME)');
    case 'DATETIME':
      return cat(p, 'CAST(', x, ' AS TIMESTAMP)');
    case 'MILLISECOND':
      return cat(p, '(millisecond(', x, ') % 1000)');
    case 'MICROSECOND':
      return cat(p, '(microsecond(', x, ') % 1000000)');
    default:
      return cat(p, `EXTRACT(${part.name} FROM `, x, ')');
  }
}

/** ARRAY_AGG / STRING_AGG with BigQuery's IGNORE NULLS and LIMIT inside the call. */
function aggWithModifiers(group, c, duckName) {
  const kids = [...group.kids];
  let ignoreNulls = false;
  let limit = null;
  for (let idx = 0; idx < kids.length; idx++) {
    if (isWord(kids[idx], 'IGNORE', 'RESPECT') && isWord(kids[nextSig(kids, idx + 1)], 'NULLS')) {
      ignoreNulls = isWord(kids[idx], 'IGNORE');
      kids.splice(idx, nextSig(kids, idx + 1) - idx + 1);
      idx--;
    } else if (isWord(kids[idx], 'LIMIT')) {
      const n = nextSig(kids, idx + 1);
      limit = rwSeq(kids.slice(n), c.st);
      kids.splice(idx);
      break;
    }
  }
  const args = splitArgs(kids);
  const firstArg = args[0] ?? [];
  // The aggregated expression is the first argument up to DISTINCT/ORDER BY.
  const exprNodes = firstArg.filter((nd) => !isWord(nd, 'DISTINCT'));
  const orderIdx = exprNodes.findIndex((nd) => isWord(nd, 'ORDER'));
  const valueNodes = orderIdx >= 0 ? exprNodes.slice(0, orderIdx) : exprNodes;
  let call = cat(c.p, `${duckName}(`, joinPieces(args.map((a) => rwSeq(a, c.st)), ', ', c.p), ')');
  if (ignoreNulls) call = cat(c.p, call, ' FILTER (WHERE (', rwSeq(valueNodes, c.st), ') IS NOT NULL)');
  if (limit) {
    call = duckName === 'array_agg'
      ? cat(c.p, 'list_slice(', call, ', 1, ', limit, ')')
      : cat(c.p, call); // STRING_AGG ... LIMIT is rare; DuckDB has no equivalent, keep all values.
  }
  return call;
}

/** Reads a date part argument: DAY, WEEK, WEEK(MONDAY), ISOWEEK, ... */
function readPart(nodes, p) {
  const s = sig(nodes);
  const w = s[0];
  if (!w || w.k !== 'tok' || w.tok.type !== 'id') throw new DialectError('Syntax error: Expected a date part', p);
  const name = w.tok.text.toUpperCase();
  if (!DATE_PARTS.has(name)) throw new DialectError(`A valid date part name is required but found ${w.tok.text}`, w.tok.p);
  let weekday = 0;
  if (name === 'WEEK' && isGroup(s[1])) {
    const d = sig(s[1].kids)[0];
    const idx = d?.k === 'tok' ? WEEKDAYS.indexOf(d.tok.text.toUpperCase()) : -1;
    if (idx < 0) throw new DialectError('WEEK(<WEEKDAY>) needs a weekday name', nodePos(s[1]));
    weekday = idx;
  }
  return { name, weekday };
}

const partLiteral = (name) => `'${name.toLowerCase()}'`;

/** DATE_TRUNC-style functions; `cast` is the DuckDB type of the result. */
function truncate(args, raw, c, cast) {
  if (args.length < 2) throw new DialectError('Syntax error: truncation needs a value and a date part', c.p);
  const part = readPart(raw[1], c.p);
  let x = args[0];
  const p = c.p;
  const tz = args[2];
  if (tz) x = cat(p, 'timezone(', tz, ', ', x, ')');
  let r;
  switch (part.name) {
    case 'WEEK':
      r = cat(p, `CAST(bq_week_start(`, x, `, ${part.weekday}) AS ${cast === 'TIMESTAMPTZ' && tz ? 'TIMESTAMP' : cast})`);
      break;
    case 'ISOWEEK':
      r = cat(p, `CAST(date_trunc('week', `, x, `) AS ${tz ? 'TIMESTAMP' : cast})`);
      break;
    case 'ISOYEAR':
      r = cat(p, `CAST(date_trunc('week', make_date(isoyear(`, x, `), 1, 4)) AS ${tz ? 'TIMESTAMP' : cast})`);
      break;
    default:
      r = cat(p, `CAST(date_trunc(${partLiteral(part.name)}, `, x, `) AS ${tz ? 'TIMESTAMP' : cast})`);
  }
  return tz ? cat(p, 'timezone(', tz, ', ', r, ')') : r;
}

/** `INTERVAL n PART` argument of DATE_ADD & co, already rewritten by rwSeq. */
function addInterval(args, c, op, cast) {
  if (args.length !== 2) throw new DialectError('Syntax error: expected (value, INTERVAL n part)', c.p);
  const r = cat(c.p, '((', args[0], `) ${op} `, args[1], ')');
  return cast ? cat(c.p, 'CAST(', r, ` AS ${cast})`) : r;
}

function dateDiff(args, raw, c, wholeIntervals) {
  if (args.length !== 3) throw new DialectError('Syntax error: expected (end, start, part)', c.p);
  const [a, b] = args;
  const part = readPart(raw[2], c.p);
  const p = c.p;
  switch (part.name) {
    case 'WEEK':
      return cat(p, `((bq_week_start(`, a, `, ${part.weekday}) - bq_week_start(`, b, `, ${part.weekday})) // 7)`);
    case 'ISOWEEK':
      return cat(p, `((CAST(date_trunc('week', `, a, `) AS DATE) - CAST(date_trunc('week', `, b, `) AS DATE)) // 7)`);
    case 'ISOYEAR':
      return cat(p, '(isoyear(', a, ') - isoyear(', b, '))');
    case 'DAY':
      if (!wholeIntervals) return cat(p, `date_diff('day', CAST(`, b, ' AS DATE), CAST(', a, ' AS DATE))');
    // falls through: TIMESTAMP_DIFF(..., DAY) counts whole 24-hour days
    default:
      return cat(p, `${wholeIntervals ? 'date_sub' : 'date_diff'}(${partLiteral(part.name)}, `, b, ', ', a, ')');
  }
}

/** Maps BigQuery format elements DuckDB's strftime lacks; %Q (quarter) is spliced in as an expression. */
function formatCall(fmtArg, rawFmt, value, c) {
  const s = sig(rawFmt);
  const p = c.p;
  if (s.length !== 1 || s[0].k !== 'tok' || s[0].tok.type !== 'str') return cat(p, 'strftime(', value, ', ', fmtArg, ')');
  const fmt = translateFormat(s[0].tok.value);
  const chunks = fmt.split('%Q');
  const parts = chunks.map((ch, idx) => {
    const piece = ch === '' ? text("''", p) : cat(p, 'strftime(', value, `, ${duckString(ch)})`);
    return idx < chunks.length - 1 ? cat(p, piece, ' || CAST(quarter(', value, ') AS VARCHAR)') : piece;
  });
  return parts.length === 1 ? parts[0] : cat(p, '(', joinPieces(parts, ' || ', p), ')');
}

export function translateFormat(fmt) {
  return fmt
    .replaceAll('%F', '%Y-%m-%d')
    .replaceAll('%T', '%H:%M:%S')
    .replaceAll('%D', '%m/%d/%y')
    .replaceAll('%R', '%H:%M')
    .replaceAll('%E4Y', '%Y')
    .replaceAll('%E*S', '%S.%f')
    .replaceAll('%E6S', '%S.%f')
    .replaceAll('%E3S', '%S.%g')
    .replaceAll('%Ez', '%z')
    .replaceAll('%e', '%-d')
    .replaceAll('%k', '%-H')
    .replaceAll('%l', '%-I')
    .replaceAll('%P', '%p')
    .replaceAll('%h', '%b')
    .replaceAll('%C', '%Y');
}

/** Capturing-group count of a literal regular expression (0 or 1 for REGEXP_EXTRACT). */
function regexGroup(raw) {
  const s = sig(raw);
  if (s.length !== 1 || s[0].k !== 'tok' || s[0].tok.type !== 'str') return 0;
  return /(^|[^\\])\((?!\?)/.test(s[0].tok.value) ? 1 : 0;
}

function todayLiteral(st) {
  return `DATE ${duckString(st.today)}`;
}

/** The current instant on the warehouse's `today` (so CURRENT_TIMESTAMP agrees with CURRENT_DATE). */
function nowExpr(st) {
  return `(TIMESTAMPTZ ${duckString(`${st.today} 00:00:00+00`)} + (get_current_timestamp() - date_trunc('day', get_current_timestamp())))`;
}

const rename = (to) => (args, raw, c) => cat(c.p, `${to}(`, joinPieces(args, ', ', c.p), ')');

/** @type {Record<string, (args: Piece[][], raw: Node[][], c: { p: number, st: any, group?: Node }) => Piece[]>} */
const FUNCTIONS = {
  SAFE_DIVIDE: rename('bq_safe_divide'),
  COUNTIF: rename('count_if'),
  LOGICAL_AND: rename('bool_and'),
  LOGICAL_OR: rename('bool_or'),
  IEEE_DIVIDE: (a, r, c) => cat(c.p, '(CAST(', a[0], ' AS DOUBLE) / ', a[1], ')'),
  DIV: (a, r, c) => cat(c.p, '((', a[0], ') // (', a[1], '))'),
  LOG: (a, r, c) => (a.length === 1 ? rename('ln')(a, r, c) : cat(c.p, 'log(', a[1], ', ', a[0], ')')),
  RAND: (a, r, c) => text('random()', c.p),
  SAFE_ADD: (a, r, c) => cat(c.p, 'try((', a[0], ') + (', a[1], '))'),
  SAFE_SUBTRACT: (a, r, c) => cat(c.p, 'try((', a[0], ') - (', a[1], '))'),
  SAFE_MULTIPLY: (a, r, c) => cat(c.p, 'try((', a[0], ') * (', a[1], '))'),
  SAFE_NEGATE: (a, r, c) => cat(c.p, 'try(-(', a[0], '))'),
  IS_NAN: rename('isnan'),
  RANGE_BUCKET: rename('bq_range_bucket'),
  IS_INF: rename('isinf'),
  PERCENTILE_CONT: rename('quantile_cont'),
  PERCENTILE_DISC: rename('quantile_disc'),
  APPROX_QUANTILES: (a, r, c) => {
    const s = sig(r[1] ?? []);
    const n = s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'num' ? Number(s[0].tok.text) : NaN;
    if (!Number.isInteger(n) || n < 1) throw new DialectError('APPROX_QUANTILES needs a literal integer number of quantiles', c.p);
    const fractions = Array.from({ length: n + 1 }, (_, k) => `${k / n}`);
    return cat(c.p, 'quantile_disc(', a[0], `, [${fractions.join(', ')}])`);
  },
  // Exact counts (BigQuery's are approximate): ARRAY<STRUCT<value, count>>, most frequent first.
  APPROX_TOP_COUNT: (a, r, c) => cat(c.p, 'list_transform(list_slice(list_sort(list_transform(map_entries(histogram(', a[0],
    ')), e -> struct_pack(c := e.value, v := e.key)), \'DESC\'), 1, ', a[1], '), e -> struct_pack("value" := e.v, "count" := e.c))'),
  CONCAT: (a, r, c) => (a.length === 0 ? text("''", c.p) : cat(c.p, '(', joinPieces(a, ' || ', c.p), ')')),
  FORMAT: (a, r, c) => {
    const s = sig(r[0] ?? []);
    const fmt = s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str'
      ? text(duckString(s[0].tok.value.replaceAll('%t', '%s').replaceAll('%T', '%s')), c.p)
      : a[0];
    return cat(c.p, 'printf(', joinPieces([fmt, ...a.slice(1)], ', ', c.p), ')');
  },
  CHAR_LENGTH: rename('length'),
  CHARACTER_LENGTH: rename('length'),
  BYTE_LENGTH: rename('strlen'),
  LPAD: (a, r, c) => rename('lpad')(a.length === 2 ? [...a, text("' '", c.p)] : a, r, c),
  RPAD: (a, r, c) => rename('rpad')(a.length === 2 ? [...a, text("' '", c.p)] : a, r, c),
  SPLIT: (a, r, c) => cat(c.p, 'string_split(', a[0], ', ', a[1] ?? "','", ')'),
  REGEXP_CONTAINS: rename('regexp_matches'),
  REGEXP_EXTRACT: (a, r, c) => cat(c.p, 'bq_regexp_extract(', a[0], ', ', a[1], `, ${regexGroup(r[1] ?? [])})`),
  REGEXP_SUBSTR: (a, r, c) => cat(c.p, 'bq_regexp_extract(', a[0], ', ', a[1], `, ${regexGroup(r[1] ?? [])})`),
  REGEXP_EXTRACT_ALL: (a, r, c) => cat(c.p, 'regexp_extract_all(', a[0], ', ', a[1], `, ${regexGroup(r[1] ?? [])})`),
  REGEXP_REPLACE: (a, r, c) => cat(c.p, 'regexp_replace(', a[0], ', ', a[1], ', ', a[2], ", 'g')"),
  TO_HEX: (a, r, c) => cat(c.p, 'lower(hex(', a[0], '))'),
  FROM_HEX: rename('unhex'),
  MD5: (a, r, c) => cat(c.p, 'unhex(md5(', a[0], '))'),
  SHA256: (a, r, c) => cat(c.p, 'unhex(sha256(', a[0], '))'),
  SHA1: (a, r, c) => cat(c.p, 'unhex(sha1(', a[0], '))'),
  FARM_FINGERPRINT: (a, r, c) => cat(c.p, 'CAST(hash(', a[0], ') >> 1 AS BIGINT)'),
  GENERATE_UUID: (a, r, c) => text('CAST(uuid() AS VARCHAR)', c.p),
  INITCAP: rename('bq_initcap'),
  CONTAINS_SUBSTR: (a, r, c) => cat(c.p, 'contains(lower(CAST(', a[0], ' AS VARCHAR)), lower(', a[1], '))'),
  JSON_EXTRACT_SCALAR: rename('json_extract_string'),
  JSON_VALUE: rename('json_extract_string'),
  JSON_EXTRACT: rename('json_extract'),
  JSON_QUERY: rename('json_extract'),
  TO_JSON_STRING: (a, r, c) => cat(c.p, 'CAST(to_json(', a[0], ') AS VARCHAR)'),
  PARSE_JSON: (a, r, c) => cat(c.p, 'CAST(', a[0], ' AS JSON)'),
  ARRAY_LENGTH: rename('len'),
  ARRAY_TO_STRING: (a, r, c) => (a.length === 3
    ? cat(c.p, 'array_to_string(list_transform(', a[0], ', x -> coalesce(CAST(x AS VARCHAR), ', a[2], ')), ', a[1], ')')
    : rename('array_to_string')(a, r, c)),
  ARRAY_CONCAT: (a, r, c) => a.slice(1).reduce((acc, x) => cat(c.p, 'list_concat(', acc, ', ', x, ')'), a[0]),
  ARRAY_REVERSE: rename('list_reverse'),
  ARRAY_FIRST: (a, r, c) => cat(c.p, 'list_extract(', a[0], ', 1)'),
  ARRAY_LAST: (a, r, c) => cat(c.p, 'list_extract(', a[0], ', -1)'),
  GENERATE_ARRAY: rename('generate_series'),
  GENERATE_DATE_ARRAY: (a, r, c) => cat(c.p, 'CAST(generate_series(CAST(', a[0], ' AS TIMESTAMP), CAST(', a[1], ' AS TIMESTAMP), ',
    a[2] ?? 'INTERVAL 1 DAY', ') AS DATE[])'),
  GENERATE_TIMESTAMP_ARRAY: rename('generate_series'),
  DATE: (a, r, c) => {
    if (a.length === 3) return rename('make_date')(a, r, c);
    if (a.length === 2) return cat(c.p, 'CAST(timezone(', a[1], ', ', a[0], ') AS DATE)');
    return cat(c.p, 'CAST(', a[0], ' AS DATE)');
  },
  DATETIME: (a, r, c) => {
    if (a.length === 6) return rename('make_timestamp')(a, r, c);
    if (a.length === 2) return cat(c.p, '(CAST(', a[0], ' AS DATE) + CAST(', a[1], ' AS TIME))');
    return cat(c.p, 'CAST(', a[0], ' AS TIMESTAMP)');
  },
  TIMESTAMP: (a, r, c) => (a.length === 2
    ? cat(c.p, 'timezone(', a[1], ', CAST(', a[0], ' AS TIMESTAMP))')
    : cat(c.p, 'CAST(', a[0], ' AS TIMESTAMPTZ)')),
  TIME: (a, r, c) => (a.length === 3 ? rename('make_time')(a, r, c) : cat(c.p, 'CAST(', a[0], ' AS TIME)')),
  STRING: (a, r, c) => (a.length === 2
    ? cat(c.p, 'CAST(timezone(', a[1], ', ', a[0], ') AS VARCHAR)')
    : cat(c.p, 'CAST(', a[0], ' AS VARCHAR)')),
  CURRENT_DATE: (a, r, c) => text(todayLiteral(c.st), c.p),
  CURRENT_TIMESTAMP: (a, r, c) => text(nowExpr(c.st), c.p),
  CURRENT_DATETIME: (a, r, c) => (a.length === 1
    ? cat(c.p, 'timezone(', a[0], `, ${nowExpr(c.st)})`)
    : text(`timezone('UTC', ${nowExpr(c.st)})`, c.p)),
  CURRENT_TIME: (a, r, c) => text(`CAST(timezone('UTC', ${nowExpr(c.st)}) AS TIME)`, c.p),
  UNIX_SECONDS: (a, r, c) => cat(c.p, 'CAST(floor(epoch(', a[0], ')) AS BIGINT)'),
  UNIX_MILLIS: rename('epoch_ms'),
  UNIX_MICROS: rename('epoch_us'),
  UNIX_DATE: (a, r, c) => cat(c.p, "(CAST(", a[0], " AS DATE) - DATE '1970-01-01')"),
  DATE_FROM_UNIX_DATE: (a, r, c) => cat(c.p, "(DATE '1970-01-01' + CAST(", a[0], ' AS INTEGER))'),
  TIMESTAMP_SECONDS: (a, r, c) => cat(c.p, 'to_timestamp(', a[0], ')'),
  TIMESTAMP_MILLIS: (a, r, c) => cat(c.p, 'CAST(make_timestamp(CAST(', a[0], ' AS BIGINT) * 1000) AS TIMESTAMPTZ)'),
  TIMESTAMP_MICROS: (a, r, c) => cat(c.p, 'CAST(make_timestamp(CAST(', a[0], ' AS BIGINT)) AS TIMESTAMPTZ)'),
  DATE_ADD: (a, r, c) => addInterval(a, c, '+', 'DATE'),
  DATE_SUB: (a, r, c) => addInterval(a, c, '-', 'DATE'),
  DATETIME_ADD: (a, r, c) => addInterval(a, c, '+', 'TIMESTAMP'),
  DATETIME_SUB: (a, r, c) => addInterval(a, c, '-', 'TIMESTAMP'),
  TIMESTAMP_ADD: (a, r, c) => addInterval(a, c, '+', null),
  TIMESTAMP_SUB: (a, r, c) => addInterval(a, c, '-', null),
  TIME_ADD: (a, r, c) => addInterval(a, c, '+', 'TIME'),
  TIME_SUB: (a, r, c) => addInterval(a, c, '-', 'TIME'),
  DATE_DIFF: (a, r, c) => dateDiff(a, r, c, false),
  DATETIME_DIFF: (a, r, c) => {
    const part = readPart(r[2] ?? [], c.p).name;
    return dateDiff(a, r, c, ['HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND'].includes(part));
  },
  TIMESTAMP_DIFF: (a, r, c) => dateDiff(a, r, c, true),
  TIME_DIFF: (a, r, c) => dateDiff(a, r, c, true),
  DATE_TRUNC: (a, r, c) => truncate(a, r, c, 'DATE'),
  DATETIME_TRUNC: (a, r, c) => truncate(a, r, c, 'TIMESTAMP'),
  TIMESTAMP_TRUNC: (a, r, c) => truncate(a, r, c, 'TIMESTAMPTZ'),
  TIME_TRUNC: (a, r, c) => cat(c.p, `CAST(date_trunc(${partLiteral(readPart(r[1] ?? [], c.p).name)}, TIMESTAMP '1970-01-01' + `, a[0], ') AS TIME)'),
  LAST_DAY: (a, r, c) => {
    const part = a.length > 1 ? readPart(r[1], c.p) : { name: 'MONTH', weekday: 0 };
    switch (part.name) {
      case 'YEAR':
        return cat(c.p, 'make_date(year(', a[0], '), 12, 31)');
      case 'QUARTER':
        return cat(c.p, "CAST(date_trunc('quarter', ", a[0], ") + INTERVAL 3 MONTH - INTERVAL 1 DAY AS DATE)");
      case 'WEEK':
        return cat(c.p, `(bq_week_start(`, a[0], `, ${part.weekday}) + 6)`);
      default:
        return cat(c.p, 'last_day(', a[0], ')');
    }
  },
  FORMAT_DATE: (a, r, c) => formatCall(a[0], r[0], a[1], c),
  FORMAT_DATETIME: (a, r, c) => formatCall(a[0], r[0], a[1], c),
  FORMAT_TIME: (a, r, c) => formatCall(a[0], r[0], cat(c.p, "(TIMESTAMP '1970-01-01' + ", a[1], ')'), c),
  FORMAT_TIMESTAMP: (a, r, c) => formatCall(a[0], r[0], a.length === 3 ? cat(c.p, 'timezone(', a[2], ', ', a[1], ')') : a[1], c),
  PARSE_DATE: (a, r, c) => cat(c.p, 'CAST(strptime(', a[1], ', ', fmtArg(a[0], r[0], c), ') AS DATE)'),
  PARSE_DATETIME: (a, r, c) => cat(c.p, 'CAST(strptime(', a[1], ', ', fmtArg(a[0], r[0], c), ') AS TIMESTAMP)'),
  PARSE_TIME: (a, r, c) => cat(c.p, 'CAST(strptime(', a[1], ', ', fmtArg(a[0], r[0], c), ') AS TIME)'),
  PARSE_TIMESTAMP: (a, r, c) => {
    const s = sig(r[0] ?? []);
    const hasZone = s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str' && /%E?z|%Z/.test(s[0].tok.value);
    if (hasZone) return cat(c.p, 'CAST(strptime(', a[1], ', ', fmtArg(a[0], r[0], c), ') AS TIMESTAMPTZ)');
    return cat(c.p, 'timezone(', a[2] ?? "'UTC'", ', CAST(strptime(', a[1], ', ', fmtArg(a[0], r[0], c), ') AS TIMESTAMP))');
  },
};

function fmtArg(arg, raw, c) {
  const s = sig(raw ?? []);
  if (s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str') return text(duckString(translateFormat(s[0].tok.value)), c.p);
  return arg;
}
