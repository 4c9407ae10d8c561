// BigQuery GoogleSQL -> DuckDB, before the clause rewrite: GoogleSQL whose shape DuckDB lacks, restated as SQL it
// has, on the token tree (so every later stage treats the result like text the user wrote). Pipe syntax becomes
// nested SELECTs; a quantified LIKE (`x LIKE ANY (p1, p2)`) becomes `(x LIKE p1 OR x LIKE p2)`. Synthetic tokens
// carry the offset of the source token they stand for, so errors still point into the user's SQL.
import { DialectError, isGroup, isOp, isTrivia, isWord, nextSig, sig, splitArgs, trimWs } from './dialect-tokenize.mjs';
import { notHere } from './dialect-functions.mjs';

/**
 * @typedef {import('./dialect-tokenize.mjs').Node} Node
 * @typedef {import('./dialect-tokenize.mjs').GroupNode} GroupNode
 */

/**
 * A synthetic token at offset p.
 * @param {'id' | 'op' | 'ws' | 'qid'} type @param {string} text @param {number} p @param {string} [value]
 * @returns {Node}
 */
const token = (type, text, p, value) => ({ k: 'tok', tok: { type, text, p, e: p, ...(value === undefined ? {} : { value }) } });
/** A synthetic word, operator or space at offset p. */
const word = (text, p) => token('id', text, p);
const op = (text, p) => token('op', text, p);
const space = (p) => token('ws', ' ', p);
/** @returns {GroupNode} */
const group = (kids, p) => ({ k: 'group', open: '(', kids, p, e: p });
/** Words and operators separated by spaces: `words('SELECT * FROM', p)`. */
const words = (s, p) => s.split(' ').flatMap((w, i) => [...(i ? [space(p)] : []), /^[A-Za-z_]/.test(w) ? word(w, p) : op(w, p)]);

/** The node list with pipe syntax and quantified LIKE restated; the same array when it holds neither. */
export function desugar(nodes) {
  let out = nodes;
  if (out.some((nd) => isWord(nd, 'LIKE'))) out = quantifiedLike(out);
  if (out.some((nd) => isOp(nd, '|>'))) out = pipes(out);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// x [NOT] LIKE ANY|SOME|ALL (p1, p2, ...)

/** Nodes that may end an operand of LIKE, read backwards: a path, a call, a literal. */
const isOperandPart = (nd) => nd.k === 'group' || (nd.k === 'tok' && ['id', 'qid', 'str', 'num'].includes(nd.tok.type)) || isOp(nd, '.');

/**
 * BigQuery's quantified LIKE (https://cloud.google.com/bigquery/docs/reference/standard-sql/operators#like_operator_quantified):
 * `x LIKE ANY (a, b)` is `x LIKE a OR x LIKE b`, ALL joins with AND, NOT negates each comparison. DuckDB has no
 * quantified LIKE, so the operand (a column, a path, a function call or a literal right before LIKE) is repeated
 * per pattern. `LIKE ANY UNNEST(array)` is refused by name.
 */
function quantifiedLike(nodes) {
  const out = [];
  for (let i = 0; i < nodes.length; i++) {
    const nd = nodes[i];
    const q = nextSig(nodes, i + 1);
    if (!isWord(nd, 'LIKE') || !isWord(nodes[q], 'ANY', 'SOME', 'ALL')) {
      out.push(nd);
      continue;
    }
    const g = nextSig(nodes, q + 1);
    const quantifier = nodes[q].tok.text.toUpperCase();
    if (!isGroup(nodes[g])) throw notHere(`LIKE ${quantifier} ${isWord(nodes[g], 'UNNEST') ? 'UNNEST(...)' : 'without a list'}`, nd.tok.p);
    // Take NOT and the operand back off the output.
    let k = out.length;
    while (k > 0 && isTrivia(out[k - 1])) k--;
    const negated = k > 0 && isWord(out[k - 1], 'NOT');
    if (negated) k--;
    while (k > 0 && isTrivia(out[k - 1])) k--;
    let start = k;
    while (start > 0 && isOperandPart(out[start - 1])) {
      // a group is part of the operand only as a call's arguments or the operand itself
      if (out[start - 1].k === 'group' && start - 1 > 0 && !isOperandPart(out[start - 2])) {
        start--;
        break;
      }
      start--;
    }
    const operand = out.slice(start, k).filter((x) => !isTrivia(x));
    if (operand.length === 0) throw new DialectError(`Syntax error: LIKE ${quantifier} needs a value on its left`, nd.tok.p);
    out.length = start;
    const patterns = splitArgs(nodes[g].kids);
    const joiner = quantifier === 'ALL' ? 'AND' : 'OR';
    const kids = patterns.flatMap((pattern, n) => [
      ...(n ? [space(nd.tok.p), word(joiner, nd.tok.p), space(nd.tok.p)] : []),
      ...operand,
      space(nd.tok.p),
      ...(negated ? [word('NOT', nd.tok.p), space(nd.tok.p)] : []),
      word('LIKE', nd.tok.p),
      space(nd.tok.p),
      group(pattern, nodes[g].p),
    ]);
    out.push(group(kids, nd.tok.p));
    i = g;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Pipe syntax: FROM t |> WHERE ... |> AGGREGATE ... GROUP BY ... |> ORDER BY ... |> LIMIT n

/**
 * The query being built: `SELECT <select or *> FROM <from> [WHERE ...] [GROUP BY ALL] [ORDER BY ...] [LIMIT ...]`.
 * A step that cannot extend it wraps it as `SELECT * FROM (<query>) AS <alias>` first.
 * @typedef {{ select: Node[] | null, from: Node[], where: Node[][], grouped: boolean, order: Node[] | null,
 *   limit: Node[] | null, alias: string | null }} PipeQuery
 */

/**
 * Pipe syntax (https://cloud.google.com/bigquery/docs/reference/standard-sql/pipe-syntax) as nested SELECTs.
 * Each step extends the query while that keeps its meaning (WHERE after WHERE, SELECT or AGGREGATE over a plain
 * `SELECT *`, ORDER BY then LIMIT) and wraps it otherwise. A wrapped query keeps the single range variable of
 * its input (`FROM t AS o |> WHERE ... |> JOIN u ON u.id = o.id` still reads `o`), or gets a fresh one.
 * Operators DuckDB cannot express here are refused by name.
 */
function pipes(nodes) {
  // WITH ...: the CTEs stay in front, visible to every step.
  let body = nodes;
  let head = [];
  const first = nextSig(nodes, 0);
  if (isWord(nodes[first], 'WITH')) {
    let k = nextSig(nodes, first + 1);
    if (isWord(nodes[k], 'RECURSIVE')) k = nextSig(nodes, k + 1);
    for (;;) {
      k = nextSig(nodes, k + 1); // past the name
      if (isWord(nodes[k], 'AS')) k = nextSig(nodes, k + 1);
      if (!isGroup(nodes[k])) break;
      k = nextSig(nodes, k + 1);
      if (!isOp(nodes[k], ',')) break;
      k = nextSig(nodes, k + 1);
    }
    head = nodes.slice(0, k);
    body = nodes.slice(k);
  }
  /** @type {Node[][]} */
  const steps = [[]];
  for (const nd of body) {
    if (isOp(nd, '|>')) steps.push([nd]);
    else steps[steps.length - 1].push(nd);
  }
  const [base = [], ...rest] = steps;
  const b = nextSig(base, 0);
  let n = 0;
  const fresh = () => `__pipe_${++n}`;
  /** @type {PipeQuery} */
  let q;
  if (isWord(base[b], 'FROM')) {
    const from = trimWs(base.slice(b + 1));
    q = { select: null, from, where: [], grouped: false, order: null, limit: null, alias: singleAlias(from) };
  } else {
    const p = base[b] ? nodePosOf(base[b]) : 0;
    q = wrapped(trimWs(base), fresh(), p);
  }
  for (const step of rest) q = pipeStep(q, step, fresh);
  return [...head, ...render(q, nodePosOf(nodes[first] ?? nodes[0]))];
}

const nodePosOf = (nd) => (nd.k === 'tok' ? nd.tok.p : nd.p);

/** The one range variable a FROM clause of one table defines (`t AS o`, `t o`), or null. */
function singleAlias(from) {
  const s = sig(from);
  if (s.some((nd) => nd.k === 'group' || isOp(nd, ',') || isWord(nd, 'JOIN', 'UNNEST'))) return null;
  const last = s[s.length - 1];
  const before = s[s.length - 2];
  if (!last || last.k !== 'tok' || (last.tok.type !== 'id' && last.tok.type !== 'qid')) return null;
  if (!isWord(before, 'AS') && !(before?.k === 'tok' && (before.tok.type === 'id' || before.tok.type === 'qid'))) return null;
  return last.tok.type === 'qid' ? (last.tok.value ?? null) : last.tok.text;
}

/** @returns {PipeQuery} `SELECT * FROM (<query nodes>) AS alias` */
function wrapped(query, alias, p) {
  return {
    select: null,
    from: [group(query, p), space(p), word('AS', p), space(p), token('qid', duckQuoted(alias), p, alias)],
    where: [],
    grouped: false,
    order: null,
    limit: null,
    alias,
  };
}

/** The query's nodes. */
function render(q, p) {
  const out = [...words('SELECT', p), space(p), ...(q.select ?? [op('*', p)]), space(p), word('FROM', p), space(p), ...q.from];
  q.where.forEach((w, i) => out.push(space(p), word(i ? 'AND' : 'WHERE', p), space(p), group(w, p)));
  if (q.grouped) out.push(space(p), ...words('GROUP BY ALL', p));
  if (q.order) out.push(space(p), ...words('ORDER BY', p), space(p), ...q.order);
  if (q.limit) out.push(space(p), word('LIMIT', p), space(p), ...q.limit);
  return out;
}

/** Whether the query is still `SELECT * FROM ... [WHERE ...]`. */
const plain = (q) => q.select === null && !q.grouped && q.order === null && q.limit === null;

/** @param {PipeQuery} q @param {Node[]} step `|>` and what follows it @returns {PipeQuery} */
function pipeStep(q, step, fresh) {
  const pipe = step[0];
  const p = nodePosOf(pipe);
  const at = nextSig(step, 1);
  const opNode = step[at];
  const name = opNode?.k === 'tok' ? opNode.tok.text.toUpperCase() : '';
  const after = (k) => trimWs(step.slice(k + 1));
  const wrap = (alias = q.alias ?? fresh()) => wrapped(render(q, p), alias, p);
  switch (name) {
    case 'WHERE': {
      const base = plain(q) ? q : wrap();
      return { ...base, where: [...base.where, after(at)] };
    }
    case 'SELECT':
    case 'EXTEND': {
      const base = plain(q) ? q : wrap();
      const list = after(at);
      return { ...base, select: name === 'SELECT' ? list : [op('*', p), op(',', p), space(p), ...list] };
    }
    case 'AGGREGATE': {
      const base = plain(q) ? q : wrap();
      const items = after(at);
      const g = items.findIndex((nd, k) => isWord(nd, 'GROUP') && isWord(items[nextSig(items, k + 1)], 'BY'));
      const aggregates = trimWs(g < 0 ? items : items.slice(0, g));
      const keys = g < 0 ? [] : trimWs(items.slice(nextSig(items, g + 1) + 1)).filter((nd) => !isWord(nd, 'ASC', 'DESC'));
      const select = [...keys, ...(keys.length && aggregates.length ? [op(',', p), space(p)] : []), ...aggregates];
      return { ...base, select, grouped: keys.length > 0 };
    }
    case 'ORDER': {
      const base = q.order === null && q.limit === null ? q : wrap();
      return { ...base, order: trimWs(step.slice(nextSig(step, at + 1) + 1)) };
    }
    case 'LIMIT': {
      const base = q.limit === null ? q : wrap();
      return { ...base, limit: after(at) };
    }
    case 'AS': {
      const s = sig(step.slice(at + 1));
      const alias = s[0]?.k === 'tok' ? (s[0].tok.type === 'qid' ? s[0].tok.value : s[0].tok.text) : null;
      if (!alias) throw new DialectError('Syntax error: Expected a name after |> AS', p);
      return wrap(alias);
    }
    case 'JOIN':
    case 'INNER':
    case 'LEFT':
    case 'RIGHT':
    case 'FULL':
    case 'CROSS': {
      const base = plain(q) && q.where.length === 0 ? q : wrap();
      return { ...base, from: [...base.from, space(p), ...after(0)], alias: null };
    }
    case 'SET':
    case 'DROP':
    case 'RENAME': {
      const base = plain(q) ? q : wrap();
      const items = splitArgs(after(at));
      const star = [op('*', p), space(p)];
      if (name === 'DROP') return { ...base, select: [...star, word('EXCLUDE', p), space(p), group(joinNodes(items, p), p)] };
      if (name === 'RENAME') return { ...base, select: [...star, word('RENAME', p), space(p), group(joinNodes(items, p), p)] };
      // SET a = e  ->  * REPLACE (e AS a)
      const replaced = items.map((item) => {
        const eq = item.findIndex((nd) => isOp(nd, '='));
        if (eq < 0) throw new DialectError('Syntax error: Expected "=" in |> SET', p);
        return [...trimWs(item.slice(eq + 1)), space(p), word('AS', p), space(p), ...trimWs(item.slice(0, eq))];
      });
      return { ...base, select: [...star, word('REPLACE', p), space(p), group(joinNodes(replaced, p), p)] };
    }
    case 'UNION':
    case 'INTERSECT':
    case 'EXCEPT': {
      // |> UNION ALL (q1), (q2): the operator words, then each query.
      const tail = step.slice(at);
      const firstQuery = tail.findIndex((nd) => nd.k === 'group');
      if (firstQuery < 0) throw new DialectError(`Syntax error: Expected a query after |> ${name}`, p);
      const operator = trimWs(tail.slice(0, firstQuery));
      const queries = splitArgs(tail.slice(firstQuery));
      /** @type {Node[]} */
      const combined = [group(render(q, p), p)];
      for (const query of queries) combined.push(space(p), ...operator, space(p), ...query);
      return wrapped(combined, fresh(), p);
    }
    case 'TABLESAMPLE':
    case 'PIVOT':
    case 'UNPIVOT': {
      const base = wrap();
      return { ...base, from: [...base.from, space(p), ...after(0)], alias: null };
    }
    default:
      throw notHere(`pipe operator |> ${name || 'with nothing after it'}`, p);
  }
}

/** A name in backticks, as the user would have written it (the token's text; its value is the name). */
const duckQuoted = (name) => `\`${name}\``;

/** Node lists joined by commas. */
function joinNodes(lists, p) {
  return lists.flatMap((l, i) => [...(i ? [op(',', p), space(p)] : []), ...l]);
}
