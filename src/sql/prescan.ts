/**
 * Gate 2a of the SQL guard: size and shape limits before any parsing, in one linear pass over the tokens of
 * lexer.ts (which reads the text the way BigQuery does and blanks out comments).
 *
 * It bounds the parser's work. The parser is linear on most input but retries a keyword's special
 * syntax as a plain identifier when that syntax fails, which doubles the work per nested level for a known
 * set of keywords (CAST, NOT, INTERVAL, CASE, ...; POSITION about x3). Measured, see bench/guard.mjs and
 * docs/sql-guard.md. The prescan estimates that work from the bracket structure and refuses input whose
 * estimate exceeds MAX_PARSE_WORK, so no input within MAX_SQL_LENGTH costs more than a large valid query does.
 * It bounds the depth of the tree the parser will build (MAX_EXPRESSION_DEPTH), which otherwise overflows the
 * parser's WebAssembly stack, and the nesting of brackets. And it checks the statement's shape: one statement,
 * starting with SELECT or WITH, or FROM (pipe syntax).
 *
 * Pipe syntax may start a query with FROM (`FROM t |> WHERE ...`), which the parser does not read. BigQuery
 * reads such a query as `SELECT * FROM t` followed by its pipe steps, so the text for the parser gets
 * `SELECT * ` inserted before each FROM that starts a query: the rewrite only adds tokens, so every table of the
 * user's text is still in what the parser reads, in a FROM clause as in BigQuery's reading. `toUserPosition`
 * maps the parser's positions back to the user's text.
 */
import { blanked, Lexer, SqlScanError } from './lexer';

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
  /**
   * The text for the parser: every comment replaced by spaces (line breaks kept), and QUERY_START inserted
   * before each FROM that starts a query (see `insertions`).
   */
  sql: string;
  /**
   * Text added for the parser, ascending by the user's index: QUERY_START before a FROM that starts a query, a
   * table alias moved after `FOR SYSTEM_TIME AS OF <expr>`. Everything else in `sql` is at the user's index:
   * comments and the other rewrites (`rb` prefixes, type lists of typed array literals, the moved alias's old
   * place) are replaced by text of the same length.
   */
  insertions: Insertion[];
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

/** Inserted before a FROM that starts a query (pipe syntax), so the parser reads `SELECT * FROM ...`. */
export const QUERY_START = 'SELECT * ';

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
  '+',
  '-',
  '*',
  '/',
  '%',
  '=',
  '!',
  '|',
  '&',
  '^',
  '~',
  'NOT',
  'IS',
  'IN',
  'LIKE',
  'ILIKE',
  'RLIKE',
  'REGEXP',
  'SIMILAR',
  'AT',
  'COLLATE',
  'DIV',
  'OVERLAPS',
]);

/**
 * Keywords that end one expression and start another at the same level (like a comma) for the depth bound.
 * FROM is not one: `a IS DISTINCT FROM b IS DISTINCT FROM c ...` is a single chain.
 */
const ITEM_SEPARATORS: ReadonlySet<string> = new Set([
  'WHEN',
  'THEN',
  'ELSE',
  'WHERE',
  'GROUP',
  'HAVING',
  'QUALIFY',
  'WINDOW',
  'ORDER',
  'LIMIT',
  'OFFSET',
  'ON',
  'USING',
  'JOIN',
]);

/** Clause keywords after which a comma no longer separates tables (the FROM clause has ended). */
const FROM_ENDERS: ReadonlySet<string> = new Set(['WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'OFFSET']);

/** Tokens that end the expression of `FOR SYSTEM_TIME AS OF` at its own nesting (with `)`, closing the FROM). */
const TRAVEL_END: ReadonlySet<string> = new Set(
  (
    ', ; |> WHERE GROUP HAVING QUALIFY WINDOW ORDER LIMIT JOIN INNER LEFT RIGHT FULL CROSS NATURAL ON USING ' +
    'UNION INTERSECT EXCEPT TABLESAMPLE PIVOT UNPIVOT SELECT FROM'
  ).split(' '),
);

/**
 * Tokens a type list may hold besides words: numbers (`STRING(10)`), quoted field names, type punctuation. With no
 * `.`, string or query keyword (QUERY_WORDS) such a list can name no table or routine.
 */
const TYPE_LIST_TOKENS: ReadonlySet<string> = new Set(['<', '>', ',', '(', ')', '<identifier>', '<number>']);

/**
 * BigQuery's reserved keywords (https://cloud.google.com/bigquery/docs/reference/standard-sql/lexical#reserved_keywords):
 * never an unquoted alias, and never in a type list.
 */
const RESERVED: ReadonlySet<string> = new Set(
  (
    'ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST COLLATE CONTAINS CREATE CROSS CUBE ' +
    'CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE EXCEPT EXCLUDE EXISTS EXTRACT FALSE FETCH FOLLOWING ' +
    'FOR FROM FULL GROUP GROUPING GROUPS HASH HAVING IF IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL ' +
    'LEFT LIKE LIMIT LOOKUP MERGE NATURAL NEW NO NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING ' +
    'PROTO QUALIFY RANGE RECURSIVE RESPECT RIGHT ROLLUP ROWS SELECT SET SOME STRUCT TABLESAMPLE THEN TO TREAT ' +
    'TRUE UNBOUNDED UNION UNNEST USING WHEN WHERE WINDOW WITH WITHIN'
  ).split(' '),
);

/** Types that take parameters in brackets (`STRING(10)`, `NUMERIC(10, 2)`): the only `(` a plain type list holds. */
const PARAMETERIZED_TYPES: ReadonlySet<string> = new Set(['STRING', 'BYTES', 'NUMERIC', 'DECIMAL', 'BIGNUMERIC', 'BIGDECIMAL']);

/** Words that start a query or read a table. */
const QUERY_WORDS: ReadonlySet<string> = new Set(['SELECT', 'WITH', 'FROM', 'JOIN', 'UNNEST']);

/** A name token: a quoted identifier, or a word that is not a reserved keyword. */
const isName = (text: string) => text === '<identifier>' || (/^[A-Z_]/.test(text) && !RESERVED.has(text));

/** Words after which `<` opens a type parameter list (commas inside it are not list separators). */
const TYPE_WORDS: ReadonlySet<string> = new Set(['STRUCT', 'ARRAY']);

interface Level {
  /** What closes this level. */
  closer: ')' | ']' | 'END' | '>';
  /** Opened by `AS (`: a CTE's body, after which a FROM starts the main query. */
  afterAs: boolean;
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
  /** A FROM clause of this level is being read (its commas separate tables). */
  inFrom: boolean;
  /** A `(` where a table may stand (see Bounds.open). */
  tableParen: boolean;
}

const newLevel = (closer: Level['closer'], openedAt: number, mult: number, afterAs = false): Level => ({
  closer,
  afterAs,
  openedAt,
  mult,
  openMult: 1,
  logicMult: 1,
  between: 0,
  itemOps: 0,
  itemChild: 0,
  maxItem: 0,
  setOps: 0,
  inFrom: false,
  tableParen: false,
});

/** Upper bound on the AST depth below a level: its longest operator chain plus its deepest child. */
const depthOf = (l: Level) => Math.max(l.maxItem, l.itemOps + l.itemChild) + l.setOps;

/**
 * 1-based line and column of a UTF-16 index of `text`, the column in UTF-16 code units (as JavaScript strings and
 * editors index text): the one unit of every position the guard reports.
 */
export function positionAt(text: string, index: number): SqlPosition {
  const at = Math.max(0, Math.min(index, text.length));
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < lineStart; i = text.indexOf('\n', i + 1)) line++;
  return { line, column: at - lineStart + 1 };
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * The UTF-16 indices in the parser's text (`pre.sql`) of positions the parser reported (1-based line, and column
 * in code points: datafusion-sqlparser-rs counts Rust chars), in one pass over it (a 100 KiB query can name
 * thousands of tables). This is the one place the parser's unit is converted; answers in the input's order.
 */
function parserIndices(text: string, positions: readonly SqlPosition[]): number[] {
  const order = positions
    .map((_, i) => i)
    .sort((a, b) => {
      const pa = positions[a] as SqlPosition;
      const pb = positions[b] as SqlPosition;
      return pa.line - pb.line || pa.column - pb.column;
    });
  const out = new Array<number>(positions.length).fill(text.length);
  let k = 0;
  let line = 1;
  let column = 1;
  for (let i = 0; i <= text.length && k < order.length; i++) {
    for (
      let p = positions[order[k] as number];
      p && k < order.length && (p.line < line || (p.line === line && p.column <= column));
      p = positions[order[k] as number]
    ) {
      out[order[k] as number] = i;
      k++;
    }
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      column = 1;
    } else if (!(isLowSurrogate(c) && i > 0 && isHighSurrogate(text.charCodeAt(i - 1)))) {
      column++;
    }
  }
  return out;
}

/** Text added to the user's text for the parser, before the user's UTF-16 index `at`. */
export interface Insertion {
  at: number;
  text: string;
}

/** A same-length replacement of the user's text for the parser (indices unchanged). */
interface Edit {
  at: number;
  text: string;
}

function rewrite(text: string, edits: readonly Edit[], insertions: readonly Insertion[]): string {
  const marks = [
    ...edits.map((e) => ({ at: e.at, text: e.text, skip: e.text.length })),
    ...insertions.map((e) => ({ at: e.at, text: e.text, skip: 0 })),
  ].sort((a, b) => a.at - b.at || a.skip - b.skip);
  if (marks.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const m of marks) {
    parts.push(text.slice(from, m.at), m.text);
    from = m.at + m.skip;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/** A UTF-16 index of the parser's text mapped to the user's: an index inside inserted text is its insertion point. */
export function toUserIndex(pre: Pick<PrescanOk, 'insertions'>, index: number): number {
  let shift = 0;
  for (const ins of pre.insertions) {
    const start = ins.at + shift;
    if (index < start) break;
    if (index < start + ins.text.length) return ins.at;
    shift += ins.text.length;
  }
  return index - shift;
}

/** The UTF-16 indices in the parser's text of positions the parser reported (see parserIndices). */
export function toParserIndices(pre: Pick<PrescanOk, 'sql'>, positions: readonly SqlPosition[]): number[] {
  return parserIndices(pre.sql, positions);
}

/** A position the parser reported, as a position in the user's text (UTF-16 columns, like every other). */
export function toUserPosition(sql: string, pre: Pick<PrescanOk, 'sql' | 'insertions'>, position: SqlPosition): SqlPosition {
  const [index = 0] = parserIndices(pre.sql, [position]);
  return positionAt(sql, toUserIndex(pre, index));
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
    const lexer = new Lexer(sql);
    const bounds = new Bounds(sql);
    while (lexer.next()) bounds.token(lexer.token, lexer.start);
    bounds.finish();
    const text = rewrite(lexer.text(), bounds.edits, bounds.insertions);
    return { ok: true, sql: text, insertions: bounds.insertions, tokens: bounds.tokens, work: bounds.work };
  } catch (err) {
    if (err instanceof SqlScanError) {
      return { ok: false, code: err.code, message: err.message, position: positionAt(sql, err.index) };
    }
    throw err;
  }
}

/**
 * The limits over the token stream: statement shape, nesting, tree depth and parser work. Fed every significant
 * token in order; throws SqlScanError at the first token past a limit.
 */
class Bounds {
  tokens = 0;
  work = 0;
  /** Text inserted for the parser (QUERY_START, moved aliases), ascending. */
  readonly insertions: Insertion[] = [];
  /** Same-length replacements for the parser (a moved alias's old place, type lists of typed array literals). */
  readonly edits: Edit[] = [];
  /** The last significant tokens before the current one, most recent last (for the time-travel alias). */
  private readonly history: { text: string; start: number }[] = [];
  /** A table alias written before `FOR SYSTEM_TIME AS OF`, moved after its expression (see timeTravel). */
  private travel: { alias: string; depth: number } | null = null;
  /** The outermost `ARRAY<` type list open, and whether it holds only names, numbers and type punctuation. */
  private arrayType: { from: number; depth: number; plain: boolean } | null = null;
  /** An `ARRAY<...>` type list just closed: blanked for the parser if `[` follows (a typed array literal). */
  private closedArrayType: { from: number; to: number } | null = null;
  /** Whether the last level closed was a CTE body (`AS ( ... )`). */
  private closedCte = false;
  private readonly levels: Level[] = [];

  constructor(private readonly sql: string) {}
  /** The top level, which never closes. */
  private readonly root: Level = newLevel(')', 0, 1);
  private firstWord: string | null = null;
  private sawLeadingParen = false;
  private terminatedAt = -1;
  /** Previous significant token, upper-cased for words (null at the start). */
  private prev: string | null = null;
  /** Factor of a risky `bracket` keyword waiting to see whether a bracket follows it (0: none). */
  private pendingBracketFactor = 0;

  private top(): Level | undefined {
    return this.levels[this.levels.length - 1];
  }

  private current(): Level {
    return this.top() ?? this.root;
  }

  private charge(index: number, weight = 1): void {
    this.tokens++;
    this.work += weight * multiplier(this.current());
    if (this.work > MAX_PARSE_WORK) {
      throw new SqlScanError(
        'QUERY_FAILED',
        `query too complex to check safely (estimated parser work over ${MAX_PARSE_WORK}: very many subqueries, ` +
          'or CAST/NOT/INTERVAL/CASE-like constructs nested deeply); simplify or split it',
        index,
      );
    }
  }

  private open(closer: Level['closer'], index: number, factor: number): void {
    if (this.levels.length >= MAX_NESTING_DEPTH) {
      throw new SqlScanError('QUERY_FAILED', `nesting deeper than ${MAX_NESTING_DEPTH} levels`, index);
    }
    const parent = this.current();
    const level = newLevel(closer, index, multiplier(parent) * factor, closer === ')' && this.prev === 'AS');
    // A bracket where a table may stand: after FROM or JOIN, after a comma of a FROM list, or first inside such a
    // bracket (which the parser may read as a nested join, and then this one as a table too).
    level.tableParen =
      closer === ')' &&
      (this.prev === 'FROM' || this.prev === 'JOIN' || (this.prev === ',' && parent.inFrom) || (this.prev === '(' && parent.tableParen));
    this.levels.push(level);
  }

  /** Closes the top level and folds its depth into the enclosing item. */
  private pop(index: number): void {
    const l = this.levels.pop();
    if (!l) return;
    const parent = this.current();
    parent.itemChild = Math.max(parent.itemChild, depthOf(l) + 1);
    checkDepth(parent, index);
  }

  private close(closer: Level['closer'], index: number): void {
    const l = this.top();
    if (!l || l.closer !== closer) {
      const shown = closer === 'END' ? 'END' : `'${closer}'`;
      throw new SqlScanError('QUERY_FAILED', `unbalanced ${shown}`, index);
    }
    this.closedCte = l.afterAs;
    this.pop(index);
  }

  /** Checks the statement's shape at its first word: a query, not another kind of statement. */
  private first(text: string, index: number): void {
    if (text === '(') {
      this.sawLeadingParen = true;
      return;
    }
    this.firstWord = text;
    if (text !== 'SELECT' && text !== 'WITH' && text !== 'FROM') {
      // A statement keyword is a non-read-only statement; anything else is a syntax error.
      if (STATEMENT_KEYWORDS.has(text)) {
        throw new SqlScanError('INVALID_SQL', `only a single SELECT or WITH statement is allowed, not ${text}`, index);
      }
      throw new SqlScanError(
        'QUERY_FAILED',
        `syntax error: expected SELECT, WITH or FROM (pipe syntax), found ${JSON.stringify(text)}`,
        index,
      );
    }
  }

  /** Called for every significant token, in order. */
  token(text: string, index: number): void {
    const travel = this.travel;
    if (travel && this.levels.length === travel.depth && (TRAVEL_END.has(text) || text === ')')) {
      this.insertions.push({ at: index, text: ` AS ${travel.alias} ` });
      this.travel = null;
    }
    const arrayType = this.arrayType;
    if (arrayType && !(TYPE_LIST_TOKENS.has(text) || (/^[A-Z_]/.test(text) && !QUERY_WORDS.has(text)))) arrayType.plain = false;
    if (arrayType && text === '(' && !PARAMETERIZED_TYPES.has(this.prev ?? '')) arrayType.plain = false;
    const typed = this.closedArrayType;
    this.closedArrayType = null;
    if (typed && text === '[') {
      // A typed array literal, `ARRAY<STRUCT<a STRING, b FLOAT64>>[...]`: the parser misreads nested type closers
      // there ("unmatched > in STRUCT literal"), though it reads them in CAST. The type list holds only names,
      // numbers and type punctuation (checked token by token), so no relation: the parser gets `ARRAY   [...]`.
      this.edits.push({ at: typed.from, text: blanked(this.sql.slice(typed.from, typed.to)) });
      this.prev = 'ARRAY';
    }
    if (text === 'SYSTEM_TIME' && this.prev === 'FOR') this.timeTravel();
    this.step(text, index);
    this.prev = text;
    this.history.push({ text, start: index });
    if (this.history.length > 3) this.history.shift();
  }

  /**
   * `FROM t AS c FOR SYSTEM_TIME AS OF <expr>`: BigQuery takes the alias before FOR SYSTEM_TIME (and refuses it
   * after), the parser only after the expression. The alias (`AS c`, or `c` after a name) is blanked where it
   * is and inserted, as ` AS c `, where the expression ends: before the next comma, clause or join keyword,
   * `|>`, `;` or the bracket that closes the FROM, at the same nesting. The alias stays on the same table; only
   * a name can move, and after `AS` it can be nothing but an alias.
   */
  private timeTravel(): void {
    const [before, alias] = this.history.slice(-3);
    if (!before || !alias || !isName(alias.text)) return;
    if (before.text !== 'AS' && !isName(before.text)) return;
    const end = alias.text === '<identifier>' ? this.sql.indexOf('`', alias.start + 1) + 1 : alias.start + alias.text.length;
    const from = before.text === 'AS' ? before.start : alias.start;
    this.edits.push({ at: from, text: blanked(this.sql.slice(from, end)) });
    this.travel = { alias: this.sql.slice(alias.start, end), depth: this.levels.length };
  }

  private step(text: string, index: number): void {
    if (this.terminatedAt >= 0) {
      throw new SqlScanError('INVALID_SQL', 'multiple statements: only a single SELECT or WITH statement is allowed', index);
    }
    if (this.firstWord === null) this.first(text, index);
    // A risky bracket keyword not directly followed by its bracket: charge it to the rest of the list item.
    if (this.pendingBracketFactor) {
      const factor = this.pendingBracketFactor;
      this.pendingBracketFactor = 0;
      if (text === '(' || text === '[') {
        this.charge(index);
        this.open(text === '(' ? ')' : ']', index, factor);
        return;
      }
      this.current().openMult *= factor;
    }

    const level = this.current();
    switch (text) {
      case '(':
      case '[':
        this.charge(index);
        // ARRAY[ may be parsed twice; so may the first bracket inside a bracket where a table may stand: the
        // parser tries `(...)` as a derived table first, which parses that inner bracket whole and fails after it
        // (`FROM ((SELECT ...) JOIN t ON ...)`), then as a nested join, which parses it again. Nested, that doubles
        // per level (12 levels of 4 KiB took 2 s), so each such bracket doubles the charge for what is inside it.
        this.open(
          text === '(' ? ')' : ']',
          index,
          (this.prev === 'ARRAY' && text === '[') || (text === '(' && this.prev === '(' && level.tableParen) ? 2 : 1,
        );
        break;
      case ')':
      case ']':
        this.close(text, index);
        this.charge(index);
        break;
      case '<':
        this.charge(index);
        if (this.prev !== null && TYPE_WORDS.has(this.prev)) {
          this.open('>', index, 1);
          if (this.prev === 'ARRAY' && !this.arrayType) this.arrayType = { from: index, depth: this.levels.length, plain: true };
        } else operator(level, index);
        break;
      case '>':
        this.charge(index);
        if (this.top()?.closer === '>') {
          const list = this.arrayType;
          if (list && list.depth === this.levels.length) {
            if (list.plain) this.closedArrayType = { from: list.from, to: index + 1 };
            this.arrayType = null;
          }
          this.pop(index);
        } else operator(level, index);
        break;
      case ',':
        level.openMult = 1;
        level.logicMult = 1;
        level.between = 0;
        endItem(level);
        this.charge(index);
        break;
      case 'UNION':
      case 'EXCEPT':
      case 'INTERSECT':
        level.inFrom = false;
        level.setOps++;
        checkDepth(level, index);
        this.charge(index);
        break;
      case ';':
        if (this.levels.length > 0) throw new SqlScanError('QUERY_FAILED', "';' inside brackets", index);
        this.terminatedAt = index;
        break;
      case 'CASE':
        this.charge(index);
        this.open('END', index, CASE_FACTOR);
        break;
      case 'END':
        this.close('END', index);
        this.charge(index);
        break;
      case 'BETWEEN':
        level.between++;
        operator(level, index);
        this.charge(index);
        break;
      case 'AND':
        if (level.between > 0) level.between--;
        else level.logicMult = 1;
        operator(level, index);
        this.charge(index);
        break;
      case 'OR':
      case 'XOR':
        level.logicMult = 1;
        operator(level, index);
        this.charge(index);
        break;
      case 'SELECT':
        level.inFrom = false;
        this.charge(index, SELECT_WEIGHT);
        break;
      case 'FROM':
        // A FROM at the start of the text, after `(`, or after a CTE's body starts a query (pipe syntax); in any
        // other SQL a FROM there is a syntax error, so reading it as `SELECT * FROM` changes no valid query.
        if (this.prev === null || this.prev === '(' || (this.prev === ')' && this.closedCte)) {
          this.insertions.push({ at: index, text: QUERY_START });
          this.charge(index, SELECT_WEIGHT);
        }
        level.inFrom = true;
        this.charge(index);
        break;
      case '|>':
        // Each pipe step starts a new expression, like a clause keyword.
        level.inFrom = false;
        endItem(level);
        this.charge(index);
        break;
      default: {
        this.charge(index);
        if (OPERATORS.has(text)) operator(level, index);
        else if (ITEM_SEPARATORS.has(text)) endItem(level);
        if (FROM_ENDERS.has(text)) level.inFrom = false;
        const risky = RISKY.get(text);
        if (risky?.kind === 'bracket') this.pendingBracketFactor = risky.factor;
        else if (risky?.kind === 'logic') level.logicMult *= risky.factor;
      }
    }
  }

  /** At the end of the text: every level closed, and a statement seen. */
  finish(): void {
    if (this.travel) this.insertions.push({ at: this.sql.length, text: ` AS ${this.travel.alias}` });
    this.insertions.sort((a, b) => a.at - b.at);
    if (this.pendingBracketFactor) this.current().openMult *= this.pendingBracketFactor;
    const unclosed = this.top();
    if (unclosed) {
      const what =
        unclosed.closer === 'END'
          ? 'CASE without END'
          : unclosed.closer === '>'
            ? "unclosed '<'"
            : `unclosed '${unclosed.closer === ')' ? '(' : '['}'`;
      throw new SqlScanError('QUERY_FAILED', what, unclosed.openedAt);
    }
    if (this.firstWord === null) {
      throw new SqlScanError(
        'QUERY_FAILED',
        this.sawLeadingParen ? 'no statement inside the brackets' : 'empty query: send a single SELECT or WITH statement',
        0,
      );
    }
  }
}

const multiplier = (l: Level) => l.mult * l.openMult * l.logicMult;

function checkDepth(l: Level, index: number): void {
  if (depthOf(l) > MAX_EXPRESSION_DEPTH) {
    throw new SqlScanError(
      'QUERY_FAILED',
      `expression too deep to check safely (a chain of more than ${MAX_EXPRESSION_DEPTH} operators or set operations); split it`,
      index,
    );
  }
}

/** A comma or clause keyword ends an expression: operator chains cannot continue past it. */
function endItem(l: Level): void {
  l.maxItem = Math.max(l.maxItem, l.itemOps + l.itemChild);
  l.itemOps = 0;
  l.itemChild = 0;
}

function operator(l: Level, index: number): void {
  l.itemOps++;
  checkDepth(l, index);
}
