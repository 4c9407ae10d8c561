// BigQuery GoogleSQL -> DuckDB, first stage: the tokenizer, the tree of groups built from its tokens, helpers
// over nodes, and the output pieces every later stage emits. String literals and comments are read whole here
// (BigQuery's escapes decoded) and re-emitted in DuckDB's quoting by `duckString`, never rewritten inside.
// Every piece remembers the offset of the source token it came from, so DuckDB's error positions can be
// reported against the user's own SQL.

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

const SIMPLE_ESCAPES = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '?': '?',
  '"': '"',
  "'": "'",
  '`': '`',
};
// `|>` is BigQuery's pipe operator; `||>` reads as `||` then `>`, as in BigQuery and the SQL guard.
const TWO_CHAR_OPS = new Set(['<=', '>=', '<>', '!=', '||', '<<', '>>', '=>', '|>']);

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
      // Ends at CR or LF, exactly where the Worker's SQL guard ends it (src/sql/lexer.ts): a comment that one
      // reader ends earlier than the other hides text from it. The guard refuses the other line breaks in comments.
      while (i < n && sql[i] !== '\n' && sql[i] !== '\r') i++;
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
      // The branch is taken on a digit or ".digit", so this pattern always matches at least one character.
      const m = /** @type {RegExpExecArray} */ (/^(0[xX][0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)/.exec(sql.slice(i)));
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
 * @typedef {{ k: 'tok', tok: Token }} TokNode
 * @typedef {{ k: 'group', open: '('|'[', kids: Node[], p: number, e: number }} GroupNode
 * @typedef {TokNode | GroupNode} Node
 * @typedef {{ k: 'tok', tok: Token & { type: 'ws' | 'comment' } }} TriviaNode
 */

/** @returns {Node[]} */
export function buildTree(tokens) {
  /** @type {{ kids: Node[], open?: undefined, p: number, e?: number }} */
  const root = { kids: [], p: 0 };
  /** The open groups, innermost last, under the root. @type {(GroupNode | typeof root)[]} */
  const stack = [root];
  for (const tok of tokens) {
    if (tok.type === 'op' && (tok.text === '(' || tok.text === '[')) {
      /** @type {GroupNode} */
      const g = { k: 'group', open: tok.text === '(' ? '(' : '[', kids: [], p: tok.p, e: tok.e };
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

/** @type {(nd: Node) => nd is TriviaNode} */
export const isTrivia = (nd) => nd.k === 'tok' && (nd.tok.type === 'ws' || nd.tok.type === 'comment');
/** @type {(nd: Node | undefined, ...words: string[]) => boolean} */
export const isWord = (nd, ...words) => nd?.k === 'tok' && nd.tok.type === 'id' && words.includes(nd.tok.text.toUpperCase());
/** @type {(nd: Node | undefined, text: string) => boolean} */
export const isOp = (nd, text) => nd?.k === 'tok' && nd.tok.type === 'op' && nd.tok.text === text;
/** @type {(nd: Node | undefined, open?: '(' | '[') => boolean} */
export const isGroup = (nd, open = '(') => nd?.k === 'group' && nd.open === open;
/** @param {Node} nd */
export const nodePos = (nd) => (nd.k === 'tok' ? nd.tok.p : nd.p);

export function nextSig(nodes, i) {
  let j = i;
  while (j < nodes.length && isTrivia(nodes[j])) j++;
  return j;
}

/** Splits a node list on top-level commas; whitespace around each argument is dropped (comments stay). */
export function splitArgs(nodes) {
  /** @type {Node[][]} */
  const args = [[]];
  for (const nd of nodes) {
    if (isOp(nd, ',')) args.push([]);
    else args[args.length - 1].push(nd);
  }
  if (args.length === 1 && args[0].every(isTrivia)) return [];
  return args.map(trimWs);
}

const isWs = (nd) => nd.k === 'tok' && nd.tok.type === 'ws';

export function trimWs(nodes) {
  let a = 0;
  let b = nodes.length;
  while (a < b && isWs(nodes[a])) a++;
  while (b > a && isWs(nodes[b - 1])) b--;
  return nodes.slice(a, b);
}

export const sig = (nodes) => nodes.filter((nd) => !isTrivia(nd));

// ---------------------------------------------------------------------------------------------------------
// Output pieces: text plus the source offset it stands for.

/** @typedef {{ s: string, p: number }} Piece */

/** @returns {Piece[]} */
export function text(s, p) {
  return [{ s, p }];
}

/** Concatenates pieces and strings (strings take the position of the first piece or `p`). */
export function cat(p, ...items) {
  /** @type {Piece[]} */
  const out = [];
  for (const it of items) {
    if (typeof it === 'string') out.push({ s: it, p });
    else out.push(...it);
  }
  return out;
}

/** Joins piece lists with a separator. */
export function joinPieces(list, sep, p) {
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
