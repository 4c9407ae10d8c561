/**
 * The SQL guard's lexer (part of gate 2a): reads the text the way BigQuery (GoogleSQL) does, so that comments,
 * strings and quoted identifiers end exactly where BigQuery ends them, and refuses every lexical form on which
 * the parser we use (datafusion-sqlparser-rs, BigQuery dialect) is known to disagree with BigQuery. A
 * disagreement there is a bypass: text the parser reads as a string or comment that BigQuery reads as SQL would
 * never be checked.
 *
 * It hands out significant tokens one at a time (`next()`), so the bounds in prescan.ts can stop at the first
 * token over a limit, before the rest of the text is read. Comments are blanked out (one space per UTF-16 code
 * unit, line breaks kept) in the text it builds for the parser (`text()`), so the parser never sees them and
 * every index of that text is the same index of the user's text: positions are UTF-16 indices everywhere (the
 * parser's own line and column, which count code points, are converted once, in prescan.ts). A new lexical rule
 * belongs here; limits on what the tokens add up to belong in prescan.ts.
 */

/** A refusal found while reading the text, at a UTF-16 index of it (prescan.ts turns it into a failure). */
export class SqlScanError extends Error {
  constructor(
    readonly code: 'INVALID_SQL' | 'QUERY_FAILED',
    message: string,
    readonly index: number,
  ) {
    super(message);
  }
}

/** Line-comment characters some lexers treat as line ends; refused so no lexer can end a comment early. */
const EXOTIC_LINE_BREAKS = /[\u000b\u000c\u0085\u2028\u2029]/;

const isWordStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isWordChar = (c: number) => isWordStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number) => c >= 48 && c <= 57;
const PUNCTUATION = new Set(['(', ')', '[', ']', ',', '.', ';', '+', '-', '*', '/', '%', '=', '<', '>', '!', '|', '&', '^', '~']);

function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What the lexer still has to read after handing out a token whose body it has not scanned yet. */
const enum Body {
  None,
  String,
  RawString,
  BytesString,
  RawBytesString,
  QuotedIdentifier,
}

/**
 * Tokens of a SQL text, one `next()` at a time. The current token is `token` (upper-cased for words;
 * `<string>`, `<number>` or `<identifier>` for literals and quoted identifiers; the character for punctuation)
 * starting at index `start`. `next()` throws SqlScanError on a form it refuses.
 *
 * A string literal or quoted identifier is handed out before its body is read (the body is read by the
 * following `next()`), so that a limit the consumer enforces at that token wins over an error inside the
 * literal, as it always has: the first problem in reading order is the one reported.
 */
export class Lexer {
  token = '';
  start = 0;
  private i = 0;
  /** Index of the second bar of the last `||` read (its two halves are handed out as two `|` tokens). */
  private concatAt = -1;
  private body: Body = Body.None;
  private readonly out: string[] = [];
  private copiedTo = 0;

  constructor(private readonly sql: string) {}

  /** The text with every comment replaced by spaces (line breaks kept), once `next()` has returned false. */
  text(): string {
    this.out.push(this.sql.slice(this.copiedTo));
    this.copiedTo = this.sql.length;
    return this.out.join('');
  }

  /** Advances to the next significant token; false at the end of the text. */
  next(): boolean {
    const sql = this.sql;
    const n = sql.length;
    if (this.body !== Body.None) this.readBody();
    let i = this.i;
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
          throw new SqlScanError('QUERY_FAILED', 'unsupported line-break character inside a comment', i);
        }
        if (c === 35 && /^#\s*legacysql\b/i.test(body)) {
          throw new SqlScanError('INVALID_SQL', 'legacy SQL is not supported; use GoogleSQL', i);
        }
        this.blank(i, j);
        i = j;
        continue;
      }
      if (c === 47 && sql.charCodeAt(i + 1) === 42) {
        const end = sql.indexOf('*/', i + 2);
        if (end < 0) throw new SqlScanError('QUERY_FAILED', 'unterminated /* comment', i);
        const nested = sql.indexOf('/*', i + 2);
        if (nested >= 0 && nested < end) {
          throw new SqlScanError('QUERY_FAILED', "'/*' inside a comment (comments do not nest)", nested);
        }
        this.blank(i, end + 2);
        i = end + 2;
        continue;
      }
      return this.significant(c, i);
    }
    this.i = i;
    return false;
  }

  /** Reads the token starting at `i` (not whitespace, not a comment) and makes it current. */
  private significant(c: number, i: number): boolean {
    const sql = this.sql;
    const n = sql.length;
    this.start = i;
    // Words: keywords, identifiers, and string prefixes r/b/rb/br.
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordChar(sql.charCodeAt(j))) j++;
      const word = sql.slice(i, j);
      const next = sql[j];
      if (next === "'" || next === '"') {
        const prefix = word.toLowerCase();
        if (prefix === 'r' || prefix === 'b' || prefix === 'rb' || prefix === 'br') {
          const raw = prefix.includes('r');
          const bytes = prefix.includes('b');
          // The parser reads `r` and `b` but not `rb` / `br` (it sees a name `rb` and a string). A raw bytes
          // literal has exactly a raw string's lexical rules (the backslash before its own quote is refused in
          // both, see scanString), so the parser gets ` r'...'`: same length, same extent, no relation either way.
          if (prefix.length === 2) this.replace(i, ' r');
          return this.deferBody(
            '<string>',
            j,
            raw ? (bytes ? Body.RawBytesString : Body.RawString) : bytes ? Body.BytesString : Body.String,
          );
        }
        // Any other one-letter word may be a literal prefix to the parser (x'..' hex, n'..' national: read with
        // rules of their own) where BigQuery reads a name and a string: refused. A longer word followed by a
        // quote (DATE'2024-01-01', JSON'{}') is a word and a string to both, as with a space between them.
        if (word.length === 1) {
          throw new SqlScanError('QUERY_FAILED', `put a space between ${JSON.stringify(word)} and the quote that follows it`, j);
        }
      }
      // A word followed directly by a backtick is a word and a quoted identifier to both.
      this.token = word.toUpperCase();
      this.i = j;
      return true;
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
        throw new SqlScanError('QUERY_FAILED', 'put a space between a number and the quote that follows it', j);
      }
      this.token = '<number>';
      this.i = j;
      return true;
    }
    if (c === 39 || c === 34) return this.deferBody('<string>', i, Body.String);
    if (c === 96) return this.deferBody('<identifier>', i, Body.QuotedIdentifier);
    const ch = sql[i] ?? '';
    if (PUNCTUATION.has(ch)) {
      // The pipe operator `|>` is one token, for BigQuery and the parser alike (`| >` is not a pipe). Both read
      // `||` first (`a ||> b` is `||` then `>`), so the second bar of a `||` never starts a pipe.
      if (ch === '|' && sql[i + 1] === '>' && this.concatAt !== i) {
        this.token = '|>';
        this.i = i + 2;
        return true;
      }
      if (ch === '|' && sql[i + 1] === '|' && this.concatAt !== i) this.concatAt = i + 1;
      this.token = ch;
      this.i = i + 1;
      return true;
    }
    if (ch === '@' && sql[i + 1] === '@') {
      // @@project_id, @@dataset_id, @@current_job_id, @@session_id, ...: facts about the warehouse's job and
      // session, not the brand's data.
      throw new SqlScanError(
        'INVALID_SQL',
        'system variables such as @@project_id are not allowed: ' +
          "they describe the warehouse job and its service account, not the brand's data",
        i,
      );
    }
    if (ch === '@' || ch === '?') {
      // The API has no way to send parameter values, so BigQuery could not run the query either.
      throw new SqlScanError('QUERY_FAILED', 'query parameters are not supported; write the values into the SQL', i);
    }
    if (ch === '{' || ch === '}') {
      throw new SqlScanError(
        'QUERY_FAILED',
        'template placeholders such as {dataset} belong to stored queries; raw SQL must name its tables directly',
        i,
      );
    }
    const full = String.fromCodePoint(sql.codePointAt(i) ?? c);
    throw new SqlScanError(
      'QUERY_FAILED',
      `unexpected character ${describeChar(full)} outside a string or quoted identifier (quote identifiers with backticks)`,
      i,
    );
  }

  /** Hands out a literal's token now; its body (from `at`, the opening quote) is read by the next `next()`. */
  private deferBody(token: string, at: number, body: Body): true {
    this.token = token;
    this.i = at;
    this.body = body;
    return true;
  }

  private readBody(): void {
    const body = this.body;
    this.body = Body.None;
    if (body === Body.QuotedIdentifier) this.i = scanQuotedIdentifier(this.sql, this.i);
    else {
      const raw = body === Body.RawString || body === Body.RawBytesString;
      const bytes = body === Body.BytesString || body === Body.RawBytesString;
      this.i = scanString(this.sql, this.i, raw, bytes);
    }
  }

  private blank(from: number, to: number): void {
    this.replace(from, blanked(this.sql.slice(from, to)));
  }

  /** Writes `text` over the user's text at `from` in the parser's text (same length, so every index stays). */
  private replace(from: number, text: string): void {
    this.out.push(this.sql.slice(this.copiedTo, from), text);
    this.copiedTo = from + text.length;
  }
}

/**
 * `text` with every UTF-16 code unit but line breaks replaced by a space: same length and same lines, so an index
 * of the result is the same index of the input (an emoji in a comment is two spaces, not one).
 */
export function blanked(text: string): string {
  return text.replace(/[^\n\r]/g, ' ');
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
    if (j >= n) throw new SqlScanError('QUERY_FAILED', 'unterminated string literal', start);
    const ch = sql[j];
    if (ch === '\\') {
      const escaped = sql[j + 1];
      if (escaped === undefined) throw new SqlScanError('QUERY_FAILED', 'unterminated string literal', start);
      if ((raw || bytes) && escaped === quote) {
        throw new SqlScanError(
          'QUERY_FAILED',
          `a backslash before ${quote} in a ${raw ? 'raw' : 'bytes'} literal ` +
            'is read differently by BigQuery and the checker; rewrite the literal',
          j,
        );
      }
      if (!triple && (escaped === '\n' || escaped === '\r')) {
        throw new SqlScanError('QUERY_FAILED', 'unterminated string literal (use triple quotes for multi-line strings)', start);
      }
      j += 2;
      continue;
    }
    if (ch === quote && (!triple || (sql[j + 1] === quote && sql[j + 2] === quote))) {
      j += triple ? 3 : 1;
      break;
    }
    if (!triple && (ch === '\n' || ch === '\r')) {
      throw new SqlScanError('QUERY_FAILED', 'unterminated string literal (use triple quotes for multi-line strings)', start);
    }
    j++;
  }
  const after = sql[j];
  if (after === "'" || after === '"' || after === '`') {
    throw new SqlScanError('QUERY_FAILED', 'adjacent literals must be separated by whitespace', j);
  }
  return j;
}

/** A backtick-quoted identifier; escapes and line breaks are refused (the parser does not read escapes). */
function scanQuotedIdentifier(sql: string, start: number): number {
  const n = sql.length;
  let j = start + 1;
  for (;;) {
    if (j >= n) throw new SqlScanError('QUERY_FAILED', 'unterminated quoted identifier', start);
    const ch = sql[j];
    if (ch === '`') break;
    if (ch === '\\') throw new SqlScanError('QUERY_FAILED', 'backslash escapes in quoted identifiers are not supported', j);
    if (ch === '\n' || ch === '\r') throw new SqlScanError('QUERY_FAILED', 'unterminated quoted identifier', start);
    j++;
  }
  if (j === start + 1) throw new SqlScanError('QUERY_FAILED', 'empty quoted identifier', start);
  const after = sql[j + 1];
  if (after === '`' || after === "'" || after === '"') {
    throw new SqlScanError('QUERY_FAILED', 'adjacent identifiers or literals must be separated by whitespace', j + 1);
  }
  return j + 1;
}
