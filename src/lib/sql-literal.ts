type Literal = string | number | null;

/** NUL ends a C string inside SQLite and lone surrogates are not valid UTF-8: neither can be stored faithfully. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The one SQLite literal renderer (the demo seed, the catalog files, the admin CLI): strings single-quoted with
 * quotes doubled (SQLite's only escape); numbers safe integers; NULL. Anything else is refused.
 */
export function sqlLiteral(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not a safe integer: ${value}`);
    return String(value);
  }
  if (value.includes('\0') || LONE_SURROGATE.test(value)) throw new TypeError('text contains a NUL or invalid Unicode');
  return `'${value.replaceAll("'", "''")}'`;
}
