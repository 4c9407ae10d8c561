// The node project's globalSetup: one `npm run dev` instance for every node test file that only needs a running
// service (MCP end to end, the conformance suite, the views in chromium), instead of one per file. Nothing starts
// here: a loopback broker is provided to the files as `sharedDevUrl`, and the first file that asks for the instance
// (sharedDevInstance in ./mcp-dev-instance.mjs) starts it; the others get the same one. Each file gets its own API
// keys (made here with the admin CLI on the instance's local D1 before any file uses it), so no file sees another's
// usage or limits. The instance is stopped when the run ends. A file run alone starts it the same way.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { startDevInstance } from './mcp-dev-instance.mjs';

/** @typedef {{ baseUrl: string, keys: Record<'org' | 'brand' | 'other', string> }} SharedDev */

/** The three demo keys' scopes (docs/demo-data.md), made afresh for each file. */
const KEY_SCOPES = /** @type {const} */ ([
  ['org', ['--org', 'org_demo']],
  ['brand', ['--brand', 'brand_acme']],
  ['other', ['--org', 'org_other']],
]);
/**
 * Key sets made before the first file gets the instance: the admin CLI opens the D1 in a workerd of its own, and a
 * write from it while the Worker writes (last use of a key) failed a Worker request with a 500 in a trial run.
 * Enough for every file of one run; a file past them (a rerun in watch mode) gets a set made then, one at a time.
 */
const KEY_SETS = 6;

/** @param {import('vitest/node').TestProject} project */
export default async function setup(project) {
  /** @type {Promise<Awaited<ReturnType<typeof startDevInstance>>> | undefined} */
  let instance;
  /** @type {SharedDev['keys'][]} */
  const keySets = [];
  let made = 0;
  /** Key creation, one set after the other. */
  let queue = Promise.resolve();

  /**
   * Makes `count` key sets on the instance's D1 with the admin CLI (in this process).
   * @param {Awaited<ReturnType<typeof startDevInstance>>} dev @param {number} count
   */
  function makeKeySets(dev, count) {
    const run = queue.then(async () => {
      const [{ openD1 }, { runAdminOn }] = await Promise.all([import('../../scripts/lib/d1.mjs'), import('./admin-in-process.mjs')]);
      const persistTo = join(dev.stateDir, 'wrangler-state');
      const db = await openD1({ persistTo });
      try {
        for (let i = 0; i < count; i++) {
          const set = ++made;
          /** @type {Record<string, string>} */
          const keys = {};
          for (const [who, scope] of KEY_SCOPES) {
            const r = await runAdminOn(db, persistTo, ['key', 'create', ...scope, '--name', `test file ${set} ${who} key`, '--json']);
            if (r.code !== 0) throw new Error(`admin key create failed (${r.code}): ${r.stderr}${r.stdout}`);
            keys[who] = JSON.parse(r.stdout).secret;
          }
          keySets.push(/** @type {SharedDev['keys']} */ (keys));
        }
      } finally {
        await db.close();
      }
    });
    queue = run.catch(() => undefined);
    return run;
  }

  async function start() {
    // The demo data the root globalSetup's warehouse generated (or found) for today, shared through the default
    // cache: npm run dev would generate the same database again into its fresh state dir. run-dev.test.mjs still
    // starts from nothing.
    const { DEV_PROJECT, ensureDemoDatabase, utcToday } = await import('../../dev/warehouse/demo-data.mjs');
    const { path } = await ensureDemoDatabase({ today: utcToday(), project: DEV_PROJECT });
    const dev = await startDevInstance('wq-shared-dev-', { demoDatabase: path });
    try {
      await makeKeySets(dev, KEY_SETS);
      return dev;
    } catch (e) {
      await dev.stop();
      throw e;
    }
  }

  /** @returns {Promise<SharedDev>} */
  async function forFile() {
    instance ??= start();
    const dev = await instance;
    let keys = keySets.shift();
    while (!keys) {
      await makeKeySets(dev, 1);
      keys = keySets.shift();
    }
    return { baseUrl: dev.baseUrl, keys };
  }

  const broker = createServer((_req, res) => {
    forFile().then(
      (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (e) => res.writeHead(500, { 'content-type': 'text/plain' }).end(e instanceof Error ? (e.stack ?? e.message) : String(e)),
    );
  });
  await new Promise((resolve) => broker.listen(0, '127.0.0.1', () => resolve(undefined)));
  const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (broker.address()).port}`;
  // Read with inject('sharedDevUrl') (ProvidedContext is declared in TypeScript, which this file is not).
  /** @type {(key: string, value: string) => void} */ (project.provide.bind(project))('sharedDevUrl', url);

  return async () => {
    await new Promise((resolve) => broker.close(() => resolve(undefined)));
    await (await instance?.catch(() => undefined))?.stop();
  };
}
