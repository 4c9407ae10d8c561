// The one way the Node tooling talks to D1: `wrangler d1 execute DB`, against the local database that
// `wrangler dev` uses (optionally under --persist-to) or, with remote, the deployed one. Values are only ever
// put into SQL through `sqlLiteral`/`sql`, never by concatenating raw input.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { importWorkerModules, ROOT } from './import-ts.mjs';

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
 * @type {(value: string | number | null) => string}
 */
export const { sqlLiteral } = await importWorkerModules({ 'src/seed/demo-catalog.ts': ['sqlLiteral'] });

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
 * @typedef {{ remote?: boolean; persistTo?: string; cwd?: string }} D1Target
 *   remote: the deployed database (wrangler auth applies); otherwise the local one wrangler dev uses.
 *   persistTo: local state directory (wrangler's --persist-to; default .wrangler/state).
 */

/** Error from wrangler or D1, carrying wrangler's own message. */
export class D1Error extends Error {}

/**
 * Runs SQL (one or more statements separated by `;`) or a .sql file and returns one result array per
 * statement.
 * @param {D1Target} target
 * @param {{ command: string } | { file: string }} what
 * @returns {Promise<Record<string, unknown>[][]>}
 */
export async function d1Execute(target, what) {
  const args = [WRANGLER_BIN, 'd1', 'execute', 'DB', '--json'];
  if (target.remote) args.push('--remote', '--yes');
  else {
    args.push('--local');
    if (target.persistTo) args.push('--persist-to', target.persistTo);
  }
  if ('command' in what) args.push('--command', what.command);
  else args.push('--file', what.file);

  const { code, stdout, stderr } = await run(process.execPath, args, target.cwd ?? ROOT);
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

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {string} cwd
 * @returns {Promise<{ code: number | null; stdout: string; stderr: string }>}
 */
function run(cmd, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: wranglerEnv({ FORCE_COLOR: '0', NO_COLOR: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
