// The Worker for the browser tests: wrangler's unstable_startWorker on a free loopback port, over a throwaway
// local D1 holding the migrations and the demo seed with the test's own key secrets and admin logins.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getNodeCompat } from 'miniflare';
import { unstable_startWorker } from 'wrangler';
import { DEMO_CATALOG_DIR, readCatalogDir } from '../../scripts/lib/catalog-dir.mjs';
import { openD1 } from '../../scripts/lib/d1.mjs';
import { applyMigrations } from '../../scripts/lib/migrations.mjs';
import { importWorkerModules, ROOT } from '../../scripts/lib/import-ts.mjs';

/**
 * Seeds a fresh state dir and starts the Worker on it; `stop` disposes of the Worker and deletes the state.
 * `vars` are extra plain-text bindings (e.g. a webhook URL, the local warehouse's address); `extraSql` statements run
 * after the demo seed (a test's own rows: long names, log rows, reports).
 * @param {{ prefix: string, keys: Record<string, string>, admins: Record<string, { email: string, password: string }>, vars?: Record<string, string>, extraSql?: string[] }} opts
 * @returns {Promise<{ baseUrl: string, stop: () => Promise<void> }>}
 */
export async function startSeededWorker({ prefix, keys, admins, vars = {}, extraSql = [] }) {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  /** @type {Awaited<ReturnType<typeof unstable_startWorker>> | undefined} */
  let worker;
  const stop = async () => {
    await worker?.dispose();
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    const { buildDemoSeed } = await importWorkerModules({ 'src/seed/demo-tenants.ts': ['buildDemoSeed'] });
    const seed = await buildDemoSeed({ now: Date.now(), keys, admins, catalog: await readCatalogDir(DEMO_CATALOG_DIR) });
    const db = await openD1({ persistTo: stateDir });
    try {
      await applyMigrations(db);
      await db.execute([...seed, ...extraSql].map((/** @type {string} */ s) => `${s.trim().replace(/;+$/, '')};`).join('\n'));
    } finally {
      await db.close();
    }
    worker = await startTestWorker({
      config: join(ROOT, 'wrangler.toml'),
      envFiles: [],
      bindings: {
        SESSION_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
        CURSOR_SECRET: { type: 'plain_text', value: randomBytes(32).toString('hex') },
        ...Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: 'plain_text', value }])),
      },
      dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist: stateDir, watch: false, logLevel: 'error' },
    });
    return { baseUrl: new URL(await worker.url).origin, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * wrangler's unstable_startWorker for a test, ready when it returns. wrangler watches the configuration file of every
 * Worker it starts and restarts the Worker when the file changes, and this file is the checkout's wrangler.toml,
 * which run-dev.test.mjs touches (in parallel with other node files) to restart its own `npm run dev`: that rebuilt
 * and restarted every test Worker of the run in the middle of its tests (seen here), where a POST in flight is
 * answered 503 "Your worker restarted mid-request" and in-memory state is lost. So the watch is off for the start
 * (WRANGLER_CI_DISABLE_CONFIG_WATCHING, read when wrangler reads the configuration; the variable is put back after,
 * so a process this one spawns later watches as usual). Also no telemetry and no fetch of the Request.cf
 * placeholder (offline machine), and Node.js compatibility worked out as wrangler's own commands do.
 * @param {Parameters<typeof unstable_startWorker>[0]} input
 */
export async function startTestWorker(input) {
  process.env.WRANGLER_SEND_METRICS = 'false';
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = 'false';
  const watching = process.env.WRANGLER_CI_DISABLE_CONFIG_WATCHING;
  process.env.WRANGLER_CI_DISABLE_CONFIG_WATCHING = 'true';
  try {
    const worker = await unstable_startWorker({
      ...input,
      // Node.js compatibility as `wrangler dev` and `wrangler deploy` work it out from the configuration (its
      // compatibility date and flags: v2 for ours). unstable_startWorker leaves it unset unless told, and bundled the
      // Worker without it, warning on every start that node:async_hooks needs nodejs_compat.
      build: {
        ...input.build,
        nodejsCompatMode: (config) => getNodeCompat(config.compatibility_date, config.compatibility_flags).mode,
      },
    });
    await worker.ready.catch(async (err) => {
      await worker.dispose();
      throw err;
    });
    return worker;
  } finally {
    if (watching === undefined) delete process.env.WRANGLER_CI_DISABLE_CONFIG_WATCHING;
    else process.env.WRANGLER_CI_DISABLE_CONFIG_WATCHING = watching;
  }
}
