/**
 * Gate 2a of the SQL guard: size and shape limits before any parsing, in one linear pass.
 *
 * It lexes the text the way BigQuery (GoogleSQL) does, so that comments, strings and quoted identifiers end
 * exactly where BigQuery ends them, and rejects every lexical form on which the parser we use
 * (datafusion-sqlparser-rs, BigQuery dialect) is known to disagree with BigQuery. A disagreement there is
 * a bypass: text the parser reads as a string or comment that BigQuery reads as SQL would never be checked.
 * Comments are blanked out (replaced by spaces, line breaks kept) before the text goes to the parser, so the
 * parser never sees them and positions still match the user's text.
 *
 * It also bounds the parser's work. The parser is linear on most input but retries a keyword's special
 * syntax as a plain identifier when that syntax fails, which doubles the work per nested level for a known
 * set of keywords (CAST, NOT, INTERVAL, CASE, ...; POSITION about x3). Measured, see bench/guard.mjs and
 * docs/sql-guard.md. The prescan estimates that work from the bracket structure and refuses input whose
 * estimate exceeds MAX_PARSE_WORK, so no input within MAX_SQL_LENGTH costs more than a large valid query does.
 * Finally it bounds the depth of the tree the parser will build (MAX_EXPRESSION_DEPTH), which otherwise
 * overflows the parser's WebAssembly stack.
 */

/** Longest accepted SQL text, in UTF-16 code units (100 KiB of ASCII). */
export const MAX_SQL_LENGTH = 102_400;

/** Deepest accepted nesting of brackets, CASE ... END and STRUCT<...>/ARRAY<...> types. */
export const MAX_NESTING_DEPTH = 32;

/**
 * Upper bound on the depth of the syntax tree, estimated as the longest chain of operators and set operations
 * plus nesting. The parser builds and converts the tree recursively on a fixed 1 MiB WebAssembly stack: a chain
 * of 724 `+` overflows it (730 in workerd) and the trapped instance is unusable afterwards. Deepest nesting
 * costs at most 45 more; 400 leaves a margin of 1.7x.
 */
export const MAX_EXPRESSION_DEPTH = 400;

/**
 * Upper bound on the estimated parser work, in token-parses: every token costs 1 (a SELECT 30), times 2 for
 * each enclosing construct the parser may parse twice (x4 for POSITION). The 100 KiB report query of
 * bench/guard.mjs is 31,300; inputs at the bound cost about as much to parse as it does.
 */
export const MAX_PARSE_WORK = 60_000;

export interface SqlPosition {
  line: number;
  column: number;
}

export interface PrescanFailure {
  ok: false;
  code: 'INVALID_SQL' | 'QUERY_FAILED';
  message: string;
  position?: SqlPosition;
}

export interface PrescanOk {
  ok: true;
  /** The text with every comment replaced by spaces (line breaks kept, so positions are unchanged). */
  sql: string;
  /** Significant tokens (comments and whitespace excluded). */
  tokens: number;
  /** The parser-work estimate that was checked against MAX_PARSE_WORK. */
  work: number;
}

export type PrescanResult = PrescanOk | PrescanFailure;

/**
 * Keywords whose special syntax the parser retries as a plain identifier when it fails (measured by fuzzing
 * every keyword of the parser; factor = growth of parse time per nested level). ARRAY retries only before `[`.
 * - `bracket`: the special syntax is the bracket right after the keyword (`CAST(...)`); the retry covers that
 *   bracket only. Not followed by a bracket, the keyword is charged to everything after it up to the next
 *   comma or the end of the enclosing bracket.
 * - `logic`: the special syntax is an operand of unknown extent (`NOT x`, `INTERVAL x DAY`, also across
 *   brackets: `NOT -(...)`); charged up to the next comma, the end of the enclosing bracket, or an AND / OR /
 *   XOR of the same level that is not a BETWEEN's (the parser stops their operand there).
 * CASE is special: its syntax runs to END, so CASE ... END is tracked as a bracket pair.
 */
const RISKY: ReadonlyMap<string, { factor: number; kind: 'bracket' | 'logic' }> = new Map([
  ['CAST', { factor: 2, kind: 'bracket' }],
  ['SAFE_CAST', { factor: 2, kind: 'bracket' }],
  ['TRY_CAST', { factor: 2, kind: 'bracket' }],
  ['CONVERT', { factor: 2, kind: 'bracket' }],
  ['CEIL', { factor: 2, kind: 'bracket' }],
  ['FLOOR', { factor: 2, kind: 'bracket' }],
  ['CURRENT_DATE', { factor: 2, kind: 'bracket' }],
  ['CURRENT_TIME', { factor: 2, kind: 'bracket' }],
  ['CURRENT_TIMESTAMP', { factor: 2, kind: 'bracket' }],
  ['LOCALTIME', { factor: 2, kind: 'bracket' }],
  ['LOCALTIMESTAMP', { factor: 2, kind: 'bracket' }],
  ['OVERLAY', { factor: 2, kind: 'bracket' }],
  ['SUBSTR', { factor: 2, kind: 'bracket' }],
  ['SUBSTRING', { factor: 2, kind: 'bracket' }],
  ['POSITION', { factor: 4, kind: 'bracket' }],
  ['NOT', { factor: 2, kind: 'logic' }],
  ['INTERVAL', { factor: 2, kind: 'logic' }],
]);

/** First words of BigQuery statements other than queries (DML, DDL, DCL, scripting, transactions, EXPORT). */
const STATEMENT_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'INSERT UPDATE DELETE MERGE TRUNCATE CREATE DROP ALTER UNDROP DECLARE SET EXECUTE BEGIN CALL IF LOOP WHILE ' +
    'REPEAT FOR EXPORT LOAD GRANT REVOKE EXPLAIN ASSERT RAISE RETURN BREAK LEAVE CONTINUE ITERATE COMMIT ' +
    'ROLLBACK START END CASE DESCRIBE SHOW USE'
  ).split(' '),
);

/**
 * Work units charged for a SELECT keyword: each SELECT becomes a large node (some 20 fields, tokens and spans)
 * that costs about as much to build and convert as 20-30 plain tokens (measured: a 100 KiB text of tiny
 * subqueries parses 3x slower than the 100 KiB report query).
 */
const SELECT_WEIGHT = 30;

/** CASE ... END: the whole construct may be parsed twice. */
const CASE_FACTOR = 2;

/**
 * Tokens that combine expressions; each may add a level to the AST (`<` and `>` are handled apart, for types).
 * Punctuation counts per character, so `||` or `<=` count twice: the bound only needs to be an upper bound.
 */
const OPERATORS: ReadonlySet<string> = new Set([
  '+', '-', '*', '/', '%', '=', '!', '|', '&', '^', '~',
  'NOT', 'IS', 'IN', 'LIKE', 'ILIKE', 'RLIKE', 'REGEXP', 'SIMILAR', 'AT', 'COLLATE', 'DIV', 'OVERLAPS',
]);

/**
 * Keywords that end one expression and start another at the same level (like a comma) for the depth bound.
 * FROM is not one: `a IS DISTINCT FROM b IS DISTINCT FROM c ...` is a single chain.
 */
const ITEM_SEPARATORS: ReadonlySet<string> = new Set([
  'WHEN', 'THEN', 'ELSE', 'WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'OFFSET', 'ON', 'USING', 'JOIN',
]);

/** Words after which `<` opens a type parameter list (commas inside it are not list separators). */
const TYPE_WORDS: ReadonlySet<string> = new Set(['STRUCT', 'ARRAY']);

/** Line-comment characters some lexers treat as line ends; refused so no lexer can end a comment early. */
const EXOTIC_LINE_BREAKS = /[\u000b\u000c\u0085\u2028\u2029]/;

interface Level {
  /** What closes this level. */
  closer: ')' | ']' | 'END' | '>';
  /** Index of the opening token, for error positions. */
  openedAt: number;
  /** Work multiplier inherited when the level opened. */
  mult: number;
  /** Multiplier of `bracket` keywords seen here without their bracket, cleared at the next comma. */
  openMult: number;
  /** Multiplier of `logic` keywords seen at this level, also cleared at AND / OR / XOR. */
  logicMult: number;
  /** BETWEENs at this level still waiting for their AND. */
  between: number;
  /** Operators in the current comma-separated item (each may add a level to the AST). */
  itemOps: number;
  /** Deepest closed child level within the current item. */
  itemChild: number;
  /** Deepest finished item of this level. */
  maxItem: number;
  /** UNION / EXCEPT / INTERSECT at this level (they chain across commas). */
  setOps: number;
}

const newLevel = (closer: Level['closer'], openedAt: number, mult: number): Level => ({
  closer,
  openedAt,
  mult,
  openMult: 1,
  logicMult: 1,
  between: 0,
  itemOps: 0,
  itemChild: 0,
  maxItem: 0,
  setOps: 0,
});

/** Upper bound on the AST depth below a level: its longest operator chain plus its deepest child. */
const depthOf = (l: Level) => Math.max(l.maxItem, l.itemOps + l.itemChild) + l.setOps;

class PrescanError extends Error {
  constructor(
    readonly code: PrescanFailure['code'],
    message: string,
    readonly index: number,
  ) {
    super(message);
  }
}

const isWordStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isWordChar = (c: number) => isWordStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number) => c >= 48 && c <= 57;
const PUNCTUATION = new Set(['(', ')', '[', ']', ',', '.', ';', '+', '-', '*', '/', '%', '=', '<', '>', '!', '|', '&', '^', '~']);

/** 1-based line and column (in code points, as the parser counts) of a UTF-16 index. */
export function positionAt(text: string, index: number): SqlPosition {
  let line = 1;
  let column = 1;
  for (let i = 0; i < index && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      column = 1;
    } else if (c >= 0xdc00 && c <= 0xdfff && i > 0 && isHighSurrogate(text.charCodeAt(i - 1))) {
      // second half of a surrogate pair: same code point
    } else {
      column++;
    }
  }
  return { line, column };
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Gate 2a: limits, BigQuery-faithful lexing, statement shape and the parser-work bound. Linear in the text.
 * On success returns the text with comments blanked, ready for the parser.
 */
export function prescan(sql: string): PrescanResult {
  if (sql.length > MAX_SQL_LENGTH) {
    return {
      ok: false,
      code: 'QUERY_FAILED',
      message: `SQL is ${sql.length} characters; the limit is ${MAX_SQL_LENGTH} (100 KiB)`,
    };
  }
  try {
    return scan(sql);
  } catch (err) {
    if (err instanceof PrescanError) {
      return { ok: false, code: err.code, message: err.message, position: positionAt(sql, err.index) };
    }
    throw err;
  }
}

function scan(sql: string): PrescanOk {
  const n = sql.length;
  const out: string[] = [];
  let copiedTo = 0;
  const blank = (from: number, to: number) => {
    out.push(sql.slice(copiedTo, from));
    // One space per code point (line breaks kept) so the parser's line/column match the user's text.
    out.push(sql.slice(from, to).replace(/[\ud800-\udbff][\udc00-\udfff]|[^\n\r]/g, ' '));
    copiedTo = to;
  };

  const levels: Level[] = [];
  const top = (): Level | undefined => levels[levels.length - 1];
  // Work multiplier at the top level, which never closes.
  const root: Level = newLevel(')', 0, 1);
  const current = (): Level => top() ?? root;
  const multiplier = (l: Level) => l.mult * l.openMult * l.logicMult;

  let tokens = 0;
  let work = 0;
  let firstWord: string | null = null;
  let sawLeadingParen = false;
  let terminatedAt = -1;
  /** Previous significant token, upper-cased for words (null at the start). */
  let prev: string | null = null;
  /** Factor of a risky `bracket` keyword waiting to see whether a bracket follows it (0: none). */
  const pending = { bracketFactor: 0 };

  const charge = (index: number, weight = 1) => {
    tokens++;
    work += weight * multiplier(current());
    if (work > MAX_PARSE_WORK) {
      throw new PrescanError(
        'QUERY_FAILED',
        `query too complex to check safely (estimated parser work over ${MAX_PARSE_WORK}: very many subqueries, or CAST/NOT/INTERVAL/CASE-like constructs nested deeply); simplify or split it`,
        index,
      );
    }
  };

  const open = (closer: Level['closer'], index: number, factor: number) => {
    if (levels.length >= MAX_NESTING_DEPTH) {
      throw new PrescanError('QUERY_FAILED', `nesting deeper than ${MAX_NESTING_DEPTH} levels`, index);
    }
    levels.push(newLevel(closer, index, multiplier(current()) * factor));
  };

  const checkDepth = (l: Level, index: number) => {
    if (depthOf(l) > MAX_EXPRESSION_DEPTH) {
      throw new PrescanError(
        'QUERY_FAILED',
        `expression too deep to check safely (a chain of more than ${MAX_EXPRESSION_DEPTH} operators or set operations); split it`,
        index,
      );
    }
  };

  /** Closes the top level and folds its depth into the enclosing item. */
  const pop = (index: number) => {
    const l = levels.pop();
    if (!l) return;
    const parent = current();
    parent.itemChild = Math.max(parent.itemChild, depthOf(l) + 1);
    checkDepth(parent, index);
  };

  const close = (closer: Level['closer'], index: number) => {
    const l = top();
    if (!l || l.closer !== closer) {
      const shown = closer === 'END' ? 'END' : `'${closer}'`;
      throw new PrescanError('QUERY_FAILED', `unbalanced ${shown}`, index);
    }
    pop(index);
  };

  /** A comma or clause keyword ends an expression: operator chains cannot continue past it. */
  const endItem = (l: Level) => {
    l.maxItem = Math.max(l.maxItem, l.itemOps + l.itemChild);
    l.itemOps = 0;
    l.itemChild = 0;
  };

  const operator = (l: Level, index: number) => {
    l.itemOps++;
    checkDepth(l, index);
  };

  /** Called for every significant token, before it is charged. */
  const token = (text: string, index: number) => {
    if (terminatedAt >= 0) {
      throw new PrescanError('INVALID_SQL', 'multiple statements: only a single SELECT or WITH statement is allowed', index);
    }
    if (firstWord === null) {
      if (text === '(') sawLeadingParen = true;
      else {
        firstWord = text;
        if (text !== 'SELECT' && text !== 'WITH') {
          // A statement keyword is a non-read-only statement; anything else is a syntax error.
          if (STATEMENT_KEYWORDS.has(text)) {
            throw new PrescanError('INVALID_SQL', `only a single SELECT or WITH statement is allowed, not ${text}`, index);
          }
          throw new PrescanError('QUERY_FAILED', `syntax error: expected SELECT or WITH, found ${JSON.stringify(text)}`, index);
        }
      }
    }
    // A risky bracket keyword not directly followed by its bracket: charge it to the rest of the list item.
    if (pending.bracketFactor) {
      const factor = pending.bracketFactor;
      pending.bracketFactor = 0;
      if (text === '(' || text === '[') {
        charge(index);
        open(text === '(' ? ')' : ']', index, factor);
        prev = text;
        return;
      }
      current().openMult *= factor;
    }

    const level = current();
    switch (text) {
      case '(':
      case '[':
        charge(index);
        open(text === '(' ? ')' : ']', index, prev === 'ARRAY' && text === '[' ? 2 : 1);
        break;
      case ')':
      case ']':
        close(text, index);
        charge(index);
        break;
      case '<':
        charge(index);
        if (prev !== null && TYPE_WORDS.has(prev)) open('>', index, 1);
        else operator(level, index);
        break;
      case '>':
        charge(index);
        if (top()?.closer === '>') pop(index);
        else operator(level, index);
        break;
      case ',':
        level.openMult = 1;
        level.logicMult = 1;
        level.between = 0;
        endItem(level);
        charge(index);
        break;
      case 'UNION':
      case 'EXCEPT':
      case 'INTERSECT':
        level.setOps++;
        checkDepth(level, index);
        charge(index);
        break;
      case ';':
        if (levels.length > 0) throw new PrescanError('QUERY_FAILED', "';' inside brackets", index);
        terminatedAt = index;
        break;
      case 'CASE':
        charge(index);
        open('END', index, CASE_FACTOR);
        break;
      case 'END':
        close('END', index);
        charge(index);
        break;
      case 'BETWEEN':
        level.between++;
        operator(level, index);
        charge(index);
        break;
      case 'AND':
        if (level.between > 0) level.between--;
        else level.logicMult = 1;
        operator(level, index);
        charge(index);
        break;
      case 'OR':
      case 'XOR':
        level.logicMult = 1;
        operator(level, index);
        charge(index);
        break;
      case 'SELECT':
        charge(index, SELECT_WEIGHT);
        break;
      default: {
        charge(index);
        if (OPERATORS.has(text)) operator(level, index);
        else if (ITEM_SEPARATORS.has(text)) endItem(level);
        const risky = RISKY.get(text);
        if (risky?.kind === 'bracket') pending.bracketFactor = risky.factor;
        else if (risky?.kind === 'logic') level.logicMult *= risky.factor;
      }
    }
    prev = text;
  };

  let i = 0;
  while (i < n) {
    const c = sql.charCodeAt(i);
    // Whitespace BigQuery and the parser agree on.
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    // Comments: -- and # to the end of the line (\n or \r), /* ... */ not nested.
    if ((c === 45 && sql.charCodeAt(i + 1) === 45) || c === 35) {
      let j = i;
      while (j < n && sql.charCodeAt(j) !== 10 && sql.charCodeAt(j) !== 13) j++;
      const body = sql.slice(i, j);
      if (EXOTIC_LINE_BREAKS.test(body)) {
        throw new PrescanError('QUERY_FAILED', 'unsupported line-break character inside a comment', i);
      }
      if (c === 35 && /^#\s*legacysql\b/i.test(body)) {
        throw new PrescanError('INVALID_SQL', 'legacy SQL is not supported; use GoogleSQL', i);
      }
      blank(i, j);
      i = j;
      continue;
    }
    if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) throw new PrescanError('QUERY_FAILED', 'unterminated /* comment', i);
      const nested = sql.indexOf('/*', i + 2);
      if (nested >= 0 && nested < end) {
        throw new PrescanError('QUERY_FAILED', "'/*' inside a comment (comments do not nest)", nested);
      }
      blank(i, end + 2);
      i = end + 2;
      continue;
    }
    // Words: keywords, identifiers, and string prefixes r/b/rb/br.
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordChar(sql.charCodeAt(j))) j++;
      const word = sql.slice(i, j);
      const next = sql[j];
      if (next === "'" || next === '"') {
        const prefix = word.toLowerCase();
        if (prefix === 'r' || prefix === 'b' || prefix === 'rb' || prefix === 'br') {
          token('<string>', i);
          i = scanString(sql, j, prefix.includes('r'), prefix.includes('b'));
          continue;
        }
        throw new PrescanError('QUERY_FAILED', `put a space between ${JSON.stringify(word)} and the quote that follows it`, j);
      }
      if (next === '`') {
        throw new PrescanError('QUERY_FAILED', `put a space between ${JSON.stringify(word)} and the backtick that follows it`, j);
      }
      token(word.toUpperCase(), i);
      i = j;
      continue;
    }
    if (isDigit(c)) {
      let j = i + 1;
      while (j < n) {
        const d = sql.charCodeAt(j);
        if (isWordChar(d) || d === 46) j++;
        else if ((d === 43 || d === 45) && (sql[j - 1] === 'e' || sql[j - 1] === 'E')) j++;
        else break;
      }
      if (sql[j] === "'" || sql[j] === '"' || sql[j] === '`') {
        throw new PrescanError('QUERY_FAILED', 'put a space between a number and the quote that follows it', j);
      }
      token('<number>', i);
      i = j;
      continue;
    }
    if (c === 39 || c === 34) {
      token('<string>', i);
      i = scanString(sql, i, false, false);
      continue;
    }
    if (c === 96) {
      token('<identifier>', i);
      i = scanQuotedIdentifier(sql, i);
      continue;
    }
    const ch = sql[i] ?? '';
    if (PUNCTUATION.has(ch)) {
      token(ch, i);
      i++;
      continue;
    }
    if (ch === '@' || ch === '?') {
      throw new PrescanError('QUERY_FAILED', 'query parameters are not supported; write the values into the SQL', i);
    }
    if (ch === '{' || ch === '}') {
      throw new PrescanError(
        'QUERY_FAILED',
        'template placeholders such as {dataset} belong to stored queries; raw SQL must name its tables directly',
        i,
      );
    }
    const full = String.fromCodePoint(sql.codePointAt(i) ?? c);
    throw new PrescanError(
      'QUERY_FAILED',
      `unexpected character ${describeChar(full)} outside a string or quoted identifier (quote identifiers with backticks)`,
      i,
    );
  }

  if (pending.bracketFactor) current().openMult *= pending.bracketFactor;
  const unclosed = top();
  if (unclosed) {
    const what = unclosed.closer === 'END' ? 'CASE without END' : unclosed.closer === '>' ? "unclosed '<'" : `unclosed '${unclosed.closer === ')' ? '(' : '['}'`;
    throw new PrescanError('QUERY_FAILED', what, unclosed.openedAt);
  }
  if (firstWord === null) {
    throw new PrescanError(
      'QUERY_FAILED',
      sawLeadingParen ? 'no statement inside the brackets' : 'empty query: send a single SELECT or WITH statement',
      0,
    );
  }
  out.push(sql.slice(copiedTo));
  return { ok: true, sql: out.join(''), tokens, work };
}

/**
 * A GoogleSQL string literal starting at `start` ('...', "...", '''...''', """..."""), returns the index after it.
 * Backslash escapes the next character; single-quoted forms cannot span lines.
 * Raw and bytes literals may not escape their own quote: the parser ends them there, BigQuery does not.
 */
function scanString(sql: string, start: number, raw: boolean, bytes: boolean): number {
  const quote = sql[start];
  const triple = sql[start + 1] === quote && sql[start + 2] === quote;
  let j = start + (triple ? 3 : 1);
  const n = sql.length;
  for (;;) {
    if (j >= n) throw new PrescanError('QUERY_FAILED', 'unterminated string literal', start);
    const ch = sql[j];
    if (ch === '\\') {
      const escaped = sql[j + 1];
      if (escaped === undefined) throw new PrescanError('QUERY_FAILED', 'unterminated string literal', start);
      if ((raw || bytes) && escaped === quote) {
        throw new PrescanError(
          'QUERY_FAILED',
          `a backslash before ${quote} in a ${raw ? 'raw' : 'bytes'} literal is read differently by BigQuery and the checker; rewrite the literal`,
          j,
        );
      }
      if (!triple && (escaped === '\n' || escaped === '\r')) {
        throw new PrescanError('QUERY_FAILED', 'unterminated string literal (use triple quotes for multi-line strings)', start);
      }
      j += 2;
      continue;
    }
    if (ch === quote && (!triple || (sql[j + 1] === quote && sql[j + 2] === quote))) {
      j += triple ? 3 : 1;
      break;
    }
    if (!triple && (ch === '\n' || ch === '\r')) {
      throw new PrescanError('QUERY_FAILED', 'unterminated string literal (use triple quotes for multi-line strings)', start);
    }
    j++;
  }
  const after = sql[j];
  if (after === "'" || after === '"' || after === '`') {
    throw new PrescanError('QUERY_FAILED', 'adjacent literals must be separated by whitespace', j);
  }
  return j;
}

/** A backtick-quoted identifier; escapes and line breaks are refused (the parser does not read escapes). */
function scanQuotedIdentifier(sql: string, start: number): number {
  const n = sql.length;
  let j = start + 1;
  for (;;) {
    if (j >= n) throw new PrescanError('QUERY_FAILED', 'unterminated quoted identifier', start);
    const ch = sql[j];
    if (ch === '`') break;
    if (ch === '\\') throw new PrescanError('QUERY_FAILED', 'backslash escapes in quoted identifiers are not supported', j);
    if (ch === '\n' || ch === '\r') throw new PrescanError('QUERY_FAILED', 'unterminated quoted identifier', start);
    j++;
  }
  if (j === start + 1) throw new PrescanError('QUERY_FAILED', 'empty quoted identifier', start);
  const after = sql[j + 1];
  if (after === '`' || after === "'" || after === '"') {
    throw new PrescanError('QUERY_FAILED', 'adjacent identifiers or literals must be separated by whitespace', j + 1);
  }
  return j + 1;
}
