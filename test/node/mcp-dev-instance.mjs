// `npm run dev` as an isolated instance for the Node-side MCP tests (end to end, conformance, views): a free
// loopback port, a throwaway --state-dir (its own credentials, vars and local state), stopped and removed
// afterwards. The test files share one (sharedDevInstance; ./shared-dev-setup.mjs starts it on first use).
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { inject } from 'vitest';
import { ROOT } from '../../scripts/lib/import-ts.mjs';
import { freePort } from './free-port.mjs';
import { reportRetry } from './retry-report.mjs';

export const READY_TIMEOUT_MS = 240_000;

/**
 * Starts the instance and resolves once the runner prints that it is ready.
 * @param {string} prefix the state directory's name prefix
 * @param {{ demoDatabase?: string }} [opts] demoDatabase: a demo warehouse database already generated for today
 *   (ensureDemoDatabase), copied into the state dir's warehouse cache so the instance does not generate it again
 * @returns {Promise<{ baseUrl: string, stateDir: string, keys: Record<'org' | 'brand' | 'other', string>, log: () => string, stop: () => Promise<void> }>}
 */
export async function startDevInstance(prefix, opts = {}) {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  if (opts.demoDatabase) {
    await mkdir(join(stateDir, 'warehouse'));
    await copyFile(opts.demoDatabase, join(stateDir, 'warehouse', basename(opts.demoDatabase)));
  }
  const port = await freePort();
  let log = '';
  const child = spawn(process.execPath, [join(ROOT, 'dev/run-dev.mjs'), '--port', String(port), '--state-dir', stateDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Not restarted when wrangler.toml changes: run-dev.test.mjs touches it, in parallel with the files using this
    // instance, to restart its own (a POST in flight then fails "Your worker restarted mid-request").
    env: { ...process.env, WRANGLER_CI_DISABLE_CONFIG_WATCHING: 'true' },
  });
  const onData = (chunk) => {
    log += chunk.toString();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  /** SIGTERM: the runner stops wrangler (through its process guard) and the warehouse, then exits. */
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    await /** @type {Promise<void>} */ (
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm run dev not ready in ${READY_TIMEOUT_MS} ms:\n${log}`)), READY_TIMEOUT_MS);
        child.stdout.on('data', () => {
          if (/\[dev\] ready in/.test(log)) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`npm run dev exited (${code}) before it was ready:\n${log}`));
        });
      })
    );
    // The runner keeps the demo credentials it printed in <state dir>/credentials.json.
    const credentials = JSON.parse(await readFile(join(stateDir, 'credentials.json'), 'utf8'));
    return { baseUrl: `http://127.0.0.1:${port}`, stateDir, keys: credentials.keys, log: () => log, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The run's shared `npm run dev` instance (started by the first file that asks) and three API keys for this file
 * alone, with the demo keys' scopes: `org` of org_demo, `brand` of brand_acme, `other` of org_other.
 * @returns {Promise<{ baseUrl: string, keys: Record<'org' | 'brand' | 'other', string> }>}
 */
export function sharedDevInstance() {
  const broker = /** @type {(key: string) => string} */ (inject)('sharedDevUrl');
  // node:http, not fetch: the answer waits for the instance to start, which can outlast fetch's 300 s header timeout.
  return new Promise((resolve, reject) => {
    get(broker, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d));
      res.on('end', () => {
        if (res.statusCode === 200) resolve(JSON.parse(body));
        else reject(new Error(`the shared npm run dev instance is not available (${res.statusCode}):\n${body}`));
      });
    }).on('error', reject);
  });
}

/** wrangler's ProxyWorker's answer to a forwarded request that failed in transit (docs/local-dev.md, "Under bursts"). */
const PROXY_TRANSIT_FAILURE = 'Your worker restarted mid-request';

/**
 * fetch for the clients of a `wrangler dev` instance: a POST that wrangler's ProxyWorker answered 503 "Your worker
 * restarted mid-request" is sent once more. That answer is the pinned dev server's, not the Worker's: wrangler 4.86's
 * ProxyWorker gives it when a keep-alive connection to the Worker closes under a request (kj's 5-second idle race,
 * cloudflare/workers-sdk#14641), and retries only GET and HEAD itself. Seen once in CI-like runs here, failing an MCP
 * client's initialize in mcp-dev.test.mjs with nothing restarted (wrangler's log shows no reload). Each retry is
 * reported on stderr and appended to `log`, so it never passes silently; a body that cannot be sent twice (a stream,
 * a Request) is not retried, and a second such answer fails the test.
 * @param {string} log the file each retry is reported in
 * @returns {(input: string | URL | Request, init?: RequestInit) => Promise<Response>}
 */
export function retryingDevFetch(log) {
  return async (input, init) => {
    const res = await fetch(input, init);
    // A Request carries its own body, which a second fetch cannot send again; so does a stream in `init`.
    if (input instanceof Request || res.status !== 503 || (init?.method ?? 'GET').toUpperCase() !== 'POST') return res;
    const body = init?.body;
    if (!(body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array)) return res;
    const text = await res.clone().text();
    if (!text.startsWith(PROXY_TRANSIT_FAILURE)) return res;
    const line = `${new Date().toISOString()} POST ${String(input)}: wrangler's proxy answered 503 "${PROXY_TRANSIT_FAILURE}"; sending it once more\n`;
    await reportRetry('dev', log, line);
    return fetch(input, init);
  };
}

/** retryingDevFetch reporting to test-artifacts/dev-proxy-retries.log: what the files on the shared instance send with. */
export const devFetch = retryingDevFetch(join(ROOT, 'test-artifacts', 'dev-proxy-retries.log'));
