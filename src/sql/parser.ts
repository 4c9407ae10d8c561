/**
 * The SQL parser: datafusion-sqlparser-rs (BigQuery dialect) compiled to WebAssembly, from
 * `@guanmingchiu/sqlparser-ts`. Chosen over node-sql-parser by measurement (docs/sql-guard.md, bench/guard.mjs).
 *
 * The .wasm is imported as a Workers module: wrangler bundles it as CompiledWasm, so the import is an already
 * compiled `WebAssembly.Module` and instantiating it is synchronous. The package's own `init()` reads the file
 * with `fs` (Node) or fetches it by URL (browsers), neither of which a Worker may do, so we call the
 * wasm-bindgen glue it ships (`initSync`) with the bundled module instead. The glue and the .wasm are imported
 * by path because the package's `exports` map does not expose them.
 */
import wasmModule from './sqlparser-wasm.js';
import { initSync, parse_sql } from '../../node_modules/@guanmingchiu/sqlparser-ts/wasm/sqlparser_rs_wasm.js';
import type { SqlPosition } from './prescan';

export type ParseOutcome = { ok: true; statements: unknown[] } | { ok: false; message: string; position?: SqlPosition };

let state: 'new' | 'ready' | 'broken' = 'new';

function ensureInstance(): void {
  if (state === 'ready') return;
  if (state === 'broken') {
    // The glue keeps one instance per isolate and cannot re-instantiate it; refuse rather than use it.
    throw new Error('SQL parser unavailable: its WebAssembly instance trapped earlier in this isolate');
  }
  initSync({ module: wasmModule });
  state = 'ready';
}

const POSITION_IN_MESSAGE = /\bat Line: (\d+), Column: (\d+)\s*$/;

function errorMessage(err: unknown): string | null {
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string') return err.message;
  return null;
}

/**
 * Parses BigQuery SQL into the parser's AST (plain JSON-like values). Syntax errors come back with the parser's
 * line and column. Anything else (a trap inside the WebAssembly instance, e.g. its stack overflowing) leaves the
 * instance in an unknown state: it is never used again and every later call throws. The prescan's bounds
 * (prescan.ts) exist so that no accepted input gets there.
 */
export function parseBigQuery(sql: string): ParseOutcome {
  ensureInstance();
  let result: unknown;
  try {
    result = parse_sql('bigquery', sql);
  } catch (err) {
    const raw = err instanceof Error ? null : errorMessage(err);
    if (raw === null) {
      state = 'broken';
      throw err;
    }
    const m = POSITION_IN_MESSAGE.exec(raw);
    const message = raw
      .replace(POSITION_IN_MESSAGE, '')
      .replace(/^sql parser error: /, '')
      .trim();
    return m ? { ok: false, message, position: { line: Number(m[1]), column: Number(m[2]) } } : { ok: false, message };
  }
  if (!Array.isArray(result)) throw new Error('SQL parser returned a non-array result');
  return { ok: true, statements: result };
}
