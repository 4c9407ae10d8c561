// The one way the Node tooling talks to D1. The local database that `wrangler dev` uses (optionally under
// --persist-to) is opened in this process exactly as `wrangler d1 execute --local` opens it (a Miniflare D1 on
// <persist>/v3/d1, wrangler's choice of database id from wrangler.toml, statements split by wrangler's own
// splitter), so a command costs milliseconds instead of a Node + workerd start. The deployed database (remote)
// goes through `wrangler d1 execute --remote`, which carries wrangler's login. Values are only ever put into SQL
// through `sqlLiteral`/`sql`, never by concatenating raw input.
//
// Miniflare is imported only when a local database is opened, and wrangler (for its statement splitter) only
// when SQL of several statements is run. Importing wrangler installs SIGINT and SIGTERM handlers that exit the
// process at once; `wranglerSplitter` takes off the ones that import added, so a long-running script with its own
// orderly shutdown (`npm run dev`, which applies the migrations in-process) keeps it.
import { isAbsolute, join, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import { importWorkerModules, ROOT } from './import-ts.mjs';
import { runProcess } from './run-process.mjs';
import { parseSections } from './wrangler-toml.mjs';

export const WRANGLER_BIN = join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

/**
 * Environment for every wrangler child: no telemetry prompt or upload, and no fetch of the `Request.cf`
 * placeholder from the internet (it fails offline and the Worker does not read `cf`).
 * @param {Record<string, string>} [extra]
 */
export function wranglerEnv(extra = {}) {
  return { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', ...extra };
}

/**
 * The one SQLite literal renderer, shared with the demo seed: strings single-quoted with quotes doubled (the
 * only escape SQLite string literals have), numbers safe integers, NULL; anything else is refused.
 */
export const { sqlLiteral } = /** @type {{ sqlLiteral: (value: string | number | null) => string }} */ (
  await importWorkerModules({ 'src/lib/sql-literal.ts': ['sqlLiteral'] })
);

/**
 * Tagged template: every interpolated value becomes a literal via `sqlLiteral`.
 * @param {TemplateStringsArray} strings
 * @param {...(string | number | null | undefined)} values
 */
export function sql(strings, ...values) {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += sqlLiteral(v ?? null) + (strings[i + 1] ?? '');
  });
  return out;
}

/**
 * @typedef {{ remote?: boolean; env?: string; config?: string; persistTo?: string; cwd?: string }} D1Target
 *   remote: the deployed database (wrangler auth applies); otherwise the local one wrangler dev uses.
 *   env: with remote, wrangler's --env (the database of wrangler.toml's [env.NAME]).
 *   config: with remote, wrangler's --config (another configuration file).
 *   persistTo: local state directory (wrangler's --persist-to; default .wrangler/state beside wrangler.toml).
 *   cwd: the directory holding wrangler.toml (default the repository root).
 */

/** @typedef {Record<string, unknown>} Row */

/**
 * What the tooling needs of a database: run SQL (one or more statements) and get one row array per statement;
 * failures are D1Errors carrying D1's message. `close` releases it.
 * @typedef {object} D1Executor
 * @property {(sql: string) => Promise<Row[][]>} execute
 * @property {() => Promise<void>} close
 */

/**
 * A local database opened in this process: also `batch`, statements already split, run one each (all or none)
 * without wrangler's splitter.
 * @typedef {D1Executor & { batch: (statements: string[]) => Promise<Row[][]> }} LocalD1
 */

/** Error from wrangler or D1, carrying wrangler's own message. */
export class D1Error extends Error {}

/**
 * wrangler's choice of local database for the binding DB of `cwd`'s wrangler.toml (top level): the preview id if
 * there is one, else the id, else the binding name. Read with our own line scanner (wrangler-toml.mjs), so opening
 * a local database does not import wrangler.
 * @param {string} cwd
 */
async function localDatabaseId(cwd) {
  const file = join(cwd, 'wrangler.toml');
  const db = parseSections(await readFile(file, 'utf8')).find((s) => s.name === 'd1_databases' && s.entries.get('binding')?.value === 'DB');
  if (!db) throw new D1Error(`no D1 binding DB in ${file}`);
  return db.entries.get('preview_database_id')?.value ?? db.entries.get('database_id')?.value ?? 'DB';
}

/**
 * SQL as statements: wrangler's own splitter (imported only here), unless the text holds no `;` but a trailing one,
 * which makes it one statement whatever the splitter would say.
 * @param {string} text
 * @returns {Promise<string[]>}
 */
async function splitStatements(text) {
  const trimmed = text.trim().replace(/;+$/, '');
  if (!trimmed.includes(';')) return [trimmed];
  const { unstable_splitSqlQuery } = await wranglerSplitter();
  return unstable_splitSqlQuery(text);
}

/** @type {Promise<typeof import('wrangler')> | undefined} */
let wranglerImport;
/**
 * wrangler's module, for `unstable_splitSqlQuery`, without the SIGINT and SIGTERM handlers importing it installs
 * (wrangler-dist/cli.js: a Pages temp-dir cleanup, then `process.exit()`, run before any orderly shutdown of the
 * importing script could finish). Only handlers that this import added are taken off; a process that imported
 * wrangler before (a test starting a Worker) keeps what it has.
 */
function wranglerSplitter() {
  wranglerImport ??= (async () => {
    const signals = /** @type {const} */ (['SIGINT', 'SIGTERM']);
    const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
    const wrangler = await import('wrangler');
    for (const signal of signals) {
      for (const listener of process.listeners(signal)) if (!before.get(signal)?.has(listener)) process.off(signal, listener);
    }
    return wrangler;
  })();
  return wranglerImport;
}

/**
 * Opens the database of `target`: in this process for the local one, through wrangler for the remote one.
 * @param {D1Target} target
 * @returns {Promise<D1Executor>}
 */
export async function openD1(target) {
  if (target.remote) return { execute: (statements) => wranglerExecute(target, ['--command', statements]), close: async () => {} };
  return openLocalD1(target);
}

/**
 * The Worker that runs a batch on the local database, reached with `dispatchFetch`. Miniflare's own binding proxy
 * (`getD1Database`) makes each `prepare` a synchronous round trip through a helper thread; a full test run once
 * failed an admin command with "error: false == true", which is what that thread's check that an answer belongs
 * to its request (`assert(message?.id === id)` in Miniflare's SynchronousFetcher) throws. A fetch is one ordinary
 * request, and needs no helper thread. D1's message is sent back as D1 gives it (the cause's message when there is
 * one, as `errorMessage` reads it).
 */
const LOCAL_D1_SCRIPT = `export default {
  async fetch(request, env) {
    try {
      const statements = await request.json();
      const results = await env.DATABASE.batch(statements.map((s) => env.DATABASE.prepare(s)));
      return Response.json({ results: results.map((r) => r.results ?? []) });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
      return Response.json({ error: cause instanceof Error ? cause.message : String(cause) });
    }
  },
};`;

/**
 * The local database of `target` (its `persistTo` and `cwd`), opened in this process.
 * @param {Omit<D1Target, 'remote' | 'env' | 'config'>} target
 * @returns {Promise<LocalD1>}
 */
export async function openLocalD1(target) {
  const cwd = target.cwd ?? ROOT;
  const [{ Miniflare }, id] = await Promise.all([import('miniflare'), localDatabaseId(cwd)]);
  const persistTo = target.persistTo
    ? isAbsolute(target.persistTo)
      ? target.persistTo
      : resolve(target.persistTo)
    : join(cwd, '.wrangler', 'state');
  const mf = new Miniflare({
    modules: true,
    script: LOCAL_D1_SCRIPT,
    d1Persist: join(persistTo, 'v3', 'd1'),
    d1Databases: { DATABASE: id },
  });
  /** @param {string[]} queries */
  const batch = async (queries) => {
    /** @type {{ results?: Row[][]; error?: string }} */
    let answer;
    try {
      const res = await mf.dispatchFetch('http://d1.local/batch', { method: 'POST', body: JSON.stringify(queries) });
      answer = /** @type {typeof answer} */ (await res.json());
    } catch (e) {
      throw new D1Error(errorMessage(e));
    }
    if (answer.error !== undefined || !answer.results) throw new D1Error(answer.error ?? 'the local D1 gave no results');
    return answer.results;
  };
  return {
    execute: async (statements) => batch(await splitStatements(statements)),
    batch,
    close: () => mf.dispose(),
  };
}

/**
 * Runs SQL (one or more statements separated by `;`) or a .sql file and returns one result array per
 * statement. Opens and closes the database around it; several commands in a row should share `openD1`.
 * @param {D1Target} target
 * @param {{ command: string } | { file: string }} what
 * @returns {Promise<Row[][]>}
 */
export async function d1Execute(target, what) {
  const statements = 'command' in what ? what.command : await readFile(what.file, 'utf8');
  const db = await openD1(target);
  try {
    return await db.execute(statements);
  } finally {
    await db.close();
  }
}

/**
 * `wrangler d1 execute DB --json` with `args` (--command SQL or --file PATH) on `target`.
 * @param {D1Target} target
 * @param {string[]} what
 * @returns {Promise<Row[][]>}
 */
export async function wranglerExecute(target, what) {
  // WRANGLER_BIN in the environment: another wrangler executable (npm run setup passes on the one it uses).
  const cmd = process.env.WRANGLER_BIN || process.execPath;
  /** @type {string[]} */
  const args = process.env.WRANGLER_BIN ? [] : [WRANGLER_BIN];
  args.push('d1', 'execute', 'DB', '--json');
  if (target.remote) {
    args.push('--remote', '--yes');
    if (target.env) args.push('--env', target.env);
    if (target.config) args.push('--config', target.config);
  } else {
    args.push('--local');
    if (target.persistTo) args.push('--persist-to', target.persistTo);
  }
  args.push(...what);

  const { code, stdout, stderr } = await runProcess(cmd, args, {
    cwd: target.cwd ?? ROOT,
    env: wranglerEnv({ FORCE_COLOR: '0', NO_COLOR: '1' }),
  });
  const parsed = parseJson(stdout);
  if (code !== 0 || !Array.isArray(parsed)) {
    const msg = parsed && typeof parsed === 'object' && 'error' in parsed ? errorText(parsed.error) : '';
    throw new D1Error(`wrangler d1 execute failed: ${msg || stderr.trim() || stdout.trim() || `exit ${code}`}`);
  }
  return parsed.map((r) => {
    if (!r || typeof r !== 'object' || r.success === false) throw new D1Error(`D1 statement failed: ${JSON.stringify(r)}`);
    return Array.isArray(r.results) ? r.results : [];
  });
}

/**
 * D1's message for a failed batch: the cause's when there is one (as wrangler prints it).
 * @param {unknown} e
 */
function errorMessage(e) {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  return cause instanceof Error ? cause.message : String(cause);
}

/** @param {unknown} e */
function errorText(e) {
  if (e && typeof e === 'object' && 'text' in e && typeof e.text === 'string') return e.text;
  return JSON.stringify(e);
}

/** @param {string} text */
function parseJson(text) {
  const start = text.search(/^[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start));
  } catch {
    return undefined;
  }
}
