// BigQuery GoogleSQL -> DuckDB: function calls (renames, argument reordering, date parts, formats) and the type
// names of CAST and typed constructors. A call's arguments are rewritten by the rewrite stage, which this module
// reaches through the state it is given (`st.rewrite`), so the two stay free of an import cycle.
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

/**
 * @typedef {import('./dialect-tokenize.mjs').Node} Node
 * @typedef {import('./dialect-tokenize.mjs').GroupNode} GroupNode
 * @typedef {import('./dialect-tokenize.mjs').Piece} Piece
 */

/**
 * What the rewrite of one statement carries: the job's project, its datasets (lower case), the warehouse's
 * today, a counter for generated UNNEST names, and the rewrite itself, for the arguments of calls.
 * @typedef {object} RewriteState
 * @property {string} project
 * @property {Set<string>} datasets
 * @property {string} today
 * @property {number} unnestCount
 * @property {(nodes: Node[], st: RewriteState) => Piece[]} rewrite
 * @property {(dataset: string) => string[]} tablesOf  the tables of a dataset, for wildcard tables
 * @property {{ alias: string | null | undefined } | null} wildcard  a wildcard table read at the current query level
 *   (alias undefined until the words after it are read)
 */

/**
 * Rewrites a node sequence with the rewrite stage carried by the state.
 * @param {Node[]} nodes
 * @param {RewriteState} st
 * @returns {Piece[]}
 */
const rwSeq = (nodes, st) => st.rewrite(nodes, st);

export const DATE_PARTS = new Set([
  'MICROSECOND',
  'MILLISECOND',
  'SECOND',
  'MINUTE',
  'HOUR',
  'DAY',
  'DAYOFWEEK',
  'DAYOFYEAR',
  'WEEK',
  'ISOWEEK',
  'MONTH',
  'QUARTER',
  'YEAR',
  'ISOYEAR',
  'DATE',
  'TIME',
  'DATETIME',
]);
export const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

const SCALAR_TYPES = {
  INT64: 'BIGINT',
  INT: 'BIGINT',
  INTEGER: 'BIGINT',
  SMALLINT: 'BIGINT',
  BIGINT: 'BIGINT',
  TINYINT: 'BIGINT',
  BYTEINT: 'BIGINT',
  // BIGNUMERIC's 76 digits do not fit DuckDB's 38; scale 18 keeps it distinct from NUMERIC's 9.
  FLOAT64: 'DOUBLE',
  FLOAT: 'DOUBLE',
  NUMERIC: 'DECIMAL(38,9)',
  DECIMAL: 'DECIMAL(38,9)',
  BIGNUMERIC: 'DECIMAL(38,18)',
  BIGDECIMAL: 'DECIMAL(38,18)',
  STRING: 'VARCHAR',
  BYTES: 'BLOB',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  DATETIME: 'TIMESTAMP',
  TIMESTAMP: 'TIMESTAMPTZ',
  TIME: 'TIME',
  JSON: 'JSON',
  INTERVAL: 'INTERVAL',
};

/** Splits `expr [AS] alias`; unaliased paths are named by their last part, others `_field_N`. */
export function aliasOf(item, idx) {
  const s = sig(item);
  const last = s[s.length - 1];
  const beforeLast = s[s.length - 2];
  if (s.length >= 3 && isWord(beforeLast, 'AS') && last.k === 'tok' && (last.tok.type === 'id' || last.tok.type === 'qid')) {
    const cut = item.indexOf(beforeLast);
    return { expr: item.slice(0, cut), name: last.tok.type === 'qid' ? last.tok.value : last.tok.text };
  }
  const pathLike =
    s.length > 0 && s.every((nd, n) => (n % 2 === 0 ? nd.k === 'tok' && (nd.tok.type === 'id' || nd.tok.type === 'qid') : isOp(nd, '.')));
  if (pathLike) {
    const tok = s[s.length - 1].tok;
    return { expr: item, name: tok.type === 'qid' ? tok.value.split('.').pop() : tok.text };
  }
  return { expr: item, name: `_field_${idx + 1}` };
}

/** Collects the tokens of `NAME<...>` starting at nodes[i], splitting `>>` into two `>`. */
export function flattenTypeTokens(nodes, i) {
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
export function parseType(tokens, i) {
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
export function typeFromNodes(nodes) {
  const s = sig(nodes);
  if (s.length === 0) throw new DialectError('Syntax error: Expected a type', 0);
  const { tokens } = flattenAll(s);
  const parsed = parseType(tokens, 0);
  if (parsed.next < tokens.length) {
    const extra = tokens[parsed.next];
    if (extra.word?.toUpperCase() === 'FORMAT')
      throw new DialectError('CAST ... FORMAT is not supported by the local warehouse', nodePos(s[0]));
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

// ---------------------------------------------------------------------------------------------------------
// Function calls

/**
 * @param {{ parts: { name: string, quoted: boolean, p: number }[] }} path
 * @param {GroupNode} group the argument list
 * @param {RewriteState} st
 */
export function functionCall(path, group, st) {
  const p = path.parts[0].p;
  const names = path.parts.map((pt) => pt.name);
  const rawArgs = splitArgs(group.kids);
  if (names.length === 1 && !path.parts[0].quoted) {
    const upper = names[0].toUpperCase();
    const special = SPECIAL_FORMS[upper];
    if (special) return special(group, { p, st, name: names[0] });
    const fn = FUNCTIONS[upper];
    if (fn)
      return fn(
        rawArgs.map((a) => rwSeq(a, st)),
        rawArgs,
        { p, st, group },
      );
    return cat(p, names[0], '(', rwSeq(group.kids, st), ')');
  }
  if (names.length === 2 && names[0].toUpperCase() === 'SAFE' && !path.parts[0].quoted) {
    // SAFE.fn(...) returns NULL instead of raising.
    const inner = functionCall({ parts: path.parts.slice(1) }, group, st);
    return cat(p, 'try(', inner, ')');
  }
  if (names.length === 2 && !path.parts[0].quoted && BUILTIN_NAMESPACES.has(names[0].toUpperCase())) {
    // NET.HOST, HLL_COUNT.*, KLL_QUANTILES.*: built-in namespaces, never routines of a dataset.
    const name = `${names[0].toUpperCase()}.${names[1].toUpperCase()}`;
    const fn = NAMESPACED[name];
    if (!fn) throw notHere(name, p);
    return fn(
      rawArgs.map((a) => rwSeq(a, st)),
      rawArgs,
      { p, st, group },
    );
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
  if (part.name === 'WEEK') {
    // BigQuery: weeks start on `weekday`; days before the year's first such day are week 0.
    return cat(p, `((dayofyear(`, x, `) + 6 - (dayofweek(`, x, `) - ${part.weekday} + 7) % 7) // 7)`);
  }
  const around = EXTRACT_PARTS[part.name];
  return around ? cat(p, around[0], x, around[1]) : cat(p, `EXTRACT(${part.name} FROM `, x, ')');
}

/**
 * EXTRACT parts whose BigQuery meaning DuckDB's EXTRACT does not share, as what goes before and after the value;
 * any other part is DuckDB's EXTRACT as is.
 * @type {Record<string, [string, string]>}
 */
const EXTRACT_PARTS = {
  DAYOFWEEK: ['(dayofweek(', ') + 1)'], // BigQuery counts Sunday as 1, DuckDB as 0
  DAYOFYEAR: ['dayofyear(', ')'],
  ISOWEEK: ['week(', ')'],
  ISOYEAR: ['isoyear(', ')'],
  DATE: ['CAST(', ' AS DATE)'],
  TIME: ['CAST(', ' AS TIME)'],
  DATETIME: ['CAST(', ' AS TIMESTAMP)'],
  MILLISECOND: ['(millisecond(', ') % 1000)'], // DuckDB's include the seconds
  MICROSECOND: ['(microsecond(', ') % 1000000)'],
};

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
  let call = cat(
    c.p,
    `${duckName}(`,
    joinPieces(
      args.map((a) => rwSeq(a, c.st)),
      ', ',
      c.p,
    ),
    ')',
  );
  if (ignoreNulls) call = cat(c.p, call, ' FILTER (WHERE (', rwSeq(valueNodes, c.st), ') IS NOT NULL)');
  if (limit) {
    call = duckName === 'array_agg' ? cat(c.p, 'list_slice(', call, ', 1, ', limit, ')') : cat(c.p, call); // STRING_AGG ... LIMIT is rare; DuckDB has no equivalent, keep all values.
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

/**
 * The refusal for GoogleSQL the local warehouse cannot express in DuckDB: names the construct, so the user knows the
 * query is fine for BigQuery and only this stand-in cannot run it (docs/local-warehouse.md keeps the list).
 */
export function notHere(construct, p) {
  return new DialectError(`${construct} runs on BigQuery, not in the local warehouse`, p);
}

/** Function namespaces BigQuery resolves as built-ins (the SQL guard accepts the same: src/sql/relations.ts). */
const BUILTIN_NAMESPACES = new Set(['NET', 'HLL_COUNT', 'KLL_QUANTILES']);

/**
 * `KLL_QUANTILES.EXTRACT_*` / `MERGE_*` over a sketch held as the list of its values (exact, where BigQuery's are
 * approximate): the value at rank ceil(phi * n), so phi 0 is the minimum and 1 the maximum, as BigQuery documents.
 */
const kllPoint = (sketch, phi) => ['list_sort(', sketch, ')[greatest(1, CAST(ceil((', phi, ') * len(', sketch, ')) AS INTEGER))]'];
const kllQuantiles = (sketch, n) => [
  'list_transform(range(0, (',
  n,
  ') + 1), k -> list_sort(',
  sketch,
  ')[greatest(1, CAST(ceil(k / (',
  n,
  ') * len(',
  sketch,
  ')) AS INTEGER))])',
];
/** The values of every sketch in the group, as one sketch. */
const kllMerged = (sketch) => ['flatten(list(', sketch, '))'];

/**
 * Functions of BigQuery's built-in namespaces. Sketches are exact here: an HLL_COUNT sketch is the list of the
 * distinct values it saw, a KLL_QUANTILES sketch the list of its values; their results are what BigQuery's
 * approximations approximate (https://cloud.google.com/bigquery/docs/reference/standard-sql/hll_functions,
 * .../kll_functions). The sketch's type is a list, where BigQuery's is BYTES.
 * @type {Record<string, (args: Piece[][], raw: Node[][], c: { p: number, st: any, group?: Node }) => Piece[]>}
 */
const NAMESPACED = {
  // NET.HOST: the host of a URL, scheme, user info and port removed (https://cloud.google.com/bigquery/docs/reference/standard-sql/net_functions#nethost).
  'NET.HOST': (a, r, c) => cat(c.p, 'bq_net_host(', a[0], ')'),
  'HLL_COUNT.INIT': (a, r, c) => cat(c.p, 'list_distinct(list(', a[0], '))'),
  'HLL_COUNT.MERGE_PARTIAL': (a, r, c) => cat(c.p, 'list_distinct(flatten(list(', a[0], ')))'),
  'HLL_COUNT.MERGE': (a, r, c) => cat(c.p, 'CAST(len(list_distinct(flatten(list(', a[0], ')))) AS BIGINT)'),
  'HLL_COUNT.EXTRACT': (a, r, c) => cat(c.p, 'CAST(coalesce(len(', a[0], '), 0) AS BIGINT)'),
  ...Object.fromEntries(
    ['INT64', 'UINT64', 'FLOAT64'].flatMap((t) => [
      [`KLL_QUANTILES.INIT_${t}`, (a, r, c) => cat(c.p, 'list_filter(list(', a[0], '), v -> v IS NOT NULL)')],
      [`KLL_QUANTILES.EXTRACT_${t}`, (a, r, c) => cat(c.p, ...kllQuantiles(a[0], a[1]))],
      [`KLL_QUANTILES.EXTRACT_POINT_${t}`, (a, r, c) => cat(c.p, ...kllPoint(a[0], a[1]))],
      [`KLL_QUANTILES.MERGE_${t}`, (a, r, c) => cat(c.p, ...kllQuantiles(cat(c.p, ...kllMerged(a[0])), a[1]))],
      [`KLL_QUANTILES.MERGE_POINT_${t}`, (a, r, c) => cat(c.p, ...kllPoint(cat(c.p, ...kllMerged(a[0])), a[1]))],
    ]),
  ),
  'KLL_QUANTILES.MERGE_PARTIAL': (a, r, c) => cat(c.p, ...kllMerged(a[0])),
};

/**
 * `*_BUCKET(value, interval [, origin])`: BigQuery's default origin is 1950-01-01 (00:00:00). DuckDB's time_bucket
 * ignores the day of an origin for month-based widths, so an origin with MONTH, QUARTER or YEAR is refused by name.
 */
const bucket = (type, origin) => (a, r, c) => {
  if (a[2] && sig(r[1] ?? []).some((nd) => isWord(nd, 'MONTH', 'QUARTER', 'YEAR'))) {
    throw notHere(
      `${type === 'DATE' ? 'DATE' : type === 'TIMESTAMP' ? 'DATETIME' : 'TIMESTAMP'}_BUCKET with a month-based width and an origin`,
      c.p,
    );
  }
  return cat(c.p, 'CAST(time_bucket(', a[1], ', CAST(', a[0], ` AS ${type}), CAST(`, a[2] ?? origin, ` AS ${type})) AS ${type})`);
};

/** JSON_QUERY_ARRAY(json [, path]): the array's elements as JSON text, in order. */
const jsonArray = (a, r, c) => cat(c.p, 'CAST(CAST(json_extract(', a[0], ', ', a[1] ?? "'$'", ') AS JSON[]) AS VARCHAR[])');
/** JSON_VALUE_ARRAY(json [, path]): the array's scalar elements as strings. */
const jsonValueArray = (a, r, c) =>
  cat(c.p, 'list_transform(CAST(json_extract(', a[0], ', ', a[1] ?? "'$'", ") AS JSON[]), e -> json_extract_string(e, '$'))");

/** @type {Record<string, (args: Piece[][], raw: Node[][], c: { p: number, st: any, group?: Node }) => Piece[]>} */
export const FUNCTIONS = {
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
  APPROX_TOP_COUNT: (a, r, c) =>
    cat(
      c.p,
      'list_transform(list_slice(list_sort(list_transform(map_entries(histogram(',
      a[0],
      ")), e -> struct_pack(c := e.value, v := e.key)), 'DESC'), 1, ",
      a[1],
      '), e -> struct_pack("value" := e.v, "count" := e.c))',
    ),
  // Exact sums: ARRAY<STRUCT<value, sum>>, largest sum first; a NULL weight adds nothing.
  APPROX_TOP_SUM: (a, r, c) => {
    const pairs = cat(c.p, 'list(struct_pack(v := ', a[0], ', w := ', a[1], '))');
    return cat(
      c.p,
      'list_transform(list_slice(list_sort(list_transform(list_distinct(list_transform(',
      pairs,
      ', e -> e.v)), u -> struct_pack(s := list_sum(list_transform(list_filter(',
      pairs,
      ", e -> e.v = u), e -> e.w)), v := u)), 'DESC'), 1, ",
      a[2],
      '), e -> struct_pack("value" := e.v, "sum" := e.s))',
    );
  },
  CONCAT: (a, r, c) => (a.length === 0 ? text("''", c.p) : cat(c.p, '(', joinPieces(a, ' || ', c.p), ')')),
  FORMAT: (a, r, c) => {
    const s = sig(r[0] ?? []);
    const fmt =
      s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str'
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
  JSON_QUERY_ARRAY: jsonArray,
  JSON_EXTRACT_ARRAY: jsonArray,
  JSON_VALUE_ARRAY: jsonValueArray,
  JSON_EXTRACT_STRING_ARRAY: jsonValueArray,
  COLLATE: (a, r, c) => cat(c.p, '(', a[0], collation(r[1] ?? [], c.p), ')'),
  DATE_BUCKET: bucket('DATE', "DATE '1950-01-01'"),
  DATETIME_BUCKET: bucket('TIMESTAMP', "TIMESTAMP '1950-01-01 00:00:00'"),
  TIMESTAMP_BUCKET: bucket('TIMESTAMPTZ', "TIMESTAMPTZ '1950-01-01 00:00:00+00'"),
  TO_JSON_STRING: (a, r, c) => cat(c.p, 'CAST(to_json(', a[0], ') AS VARCHAR)'),
  PARSE_JSON: (a, r, c) => cat(c.p, 'CAST(', a[0], ' AS JSON)'),
  ARRAY_LENGTH: rename('len'),
  ARRAY_TO_STRING: (a, r, c) =>
    a.length === 3
      ? cat(c.p, 'array_to_string(list_transform(', a[0], ', x -> coalesce(CAST(x AS VARCHAR), ', a[2], ')), ', a[1], ')')
      : rename('array_to_string')(a, r, c),
  ARRAY_CONCAT: (a, r, c) => a.slice(1).reduce((acc, x) => cat(c.p, 'list_concat(', acc, ', ', x, ')'), a[0]),
  ARRAY_REVERSE: rename('list_reverse'),
  ARRAY_FIRST: (a, r, c) => cat(c.p, 'list_extract(', a[0], ', 1)'),
  ARRAY_LAST: (a, r, c) => cat(c.p, 'list_extract(', a[0], ', -1)'),
  GENERATE_ARRAY: rename('generate_series'),
  GENERATE_DATE_ARRAY: (a, r, c) =>
    cat(
      c.p,
      'CAST(generate_series(CAST(',
      a[0],
      ' AS TIMESTAMP), CAST(',
      a[1],
      ' AS TIMESTAMP), ',
      a[2] ?? 'INTERVAL 1 DAY',
      ') AS DATE[])',
    ),
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
  TIMESTAMP: (a, r, c) =>
    a.length === 2 ? cat(c.p, 'timezone(', a[1], ', CAST(', a[0], ' AS TIMESTAMP))') : cat(c.p, 'CAST(', a[0], ' AS TIMESTAMPTZ)'),
  TIME: (a, r, c) => (a.length === 3 ? rename('make_time')(a, r, c) : cat(c.p, 'CAST(', a[0], ' AS TIME)')),
  STRING: (a, r, c) =>
    a.length === 2 ? cat(c.p, 'CAST(timezone(', a[1], ', ', a[0], ') AS VARCHAR)') : cat(c.p, 'CAST(', a[0], ' AS VARCHAR)'),
  CURRENT_DATE: (a, r, c) => text(todayLiteral(c.st), c.p),
  CURRENT_TIMESTAMP: (a, r, c) => text(nowExpr(c.st), c.p),
  CURRENT_DATETIME: (a, r, c) =>
    a.length === 1 ? cat(c.p, 'timezone(', a[0], `, ${nowExpr(c.st)})`) : text(`timezone('UTC', ${nowExpr(c.st)})`, c.p),
  CURRENT_TIME: (a, r, c) => text(`CAST(timezone('UTC', ${nowExpr(c.st)}) AS TIME)`, c.p),
  UNIX_SECONDS: (a, r, c) => cat(c.p, 'CAST(floor(epoch(', a[0], ')) AS BIGINT)'),
  UNIX_MILLIS: rename('epoch_ms'),
  UNIX_MICROS: rename('epoch_us'),
  UNIX_DATE: (a, r, c) => cat(c.p, '(CAST(', a[0], " AS DATE) - DATE '1970-01-01')"),
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
  TIME_TRUNC: (a, r, c) =>
    cat(c.p, `CAST(date_trunc(${partLiteral(readPart(r[1] ?? [], c.p).name)}, TIMESTAMP '1970-01-01' + `, a[0], ') AS TIME)'),
  LAST_DAY: (a, r, c) => {
    const part = a.length > 1 ? readPart(r[1], c.p) : { name: 'MONTH', weekday: 0 };
    switch (part.name) {
      case 'YEAR':
        return cat(c.p, 'make_date(year(', a[0], '), 12, 31)');
      case 'QUARTER':
        return cat(c.p, "CAST(date_trunc('quarter', ", a[0], ') + INTERVAL 3 MONTH - INTERVAL 1 DAY AS DATE)');
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

/**
 * DuckDB's collation for a BigQuery collation specification (a string literal): `'und:ci'` (case-insensitive,
 * the one analysts use) is NOCASE; `''` and `'und'` compare code points, as DuckDB does without one. Anything else
 * (a language's own rules) is refused by name.
 * @param {Node[]} raw the specification's nodes
 */
export function collation(raw, p) {
  const s = sig(raw);
  const spec = s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str' ? s[0].tok.value : null;
  if (spec === 'und:ci') return ' COLLATE NOCASE';
  if (spec === '' || spec === 'und') return '';
  throw notHere(`COLLATE ${spec === null ? 'with a computed specification' : `'${spec}'`}`, p);
}

function fmtArg(arg, raw, c) {
  const s = sig(raw ?? []);
  if (s.length === 1 && s[0].k === 'tok' && s[0].tok.type === 'str') return text(duckString(translateFormat(s[0].tok.value)), c.p);
  return arg;
}
