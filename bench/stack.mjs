// The local stack the benches measure: a built Worker bundle in Miniflare/workerd, wired to the local warehouse.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from 'wrangler';
import { createServiceAccount } from '../dev/warehouse/service-account.mjs';
import { DEV_PROJECT } from '../dev/warehouse/demo-data.mjs';
import { startWarehouse } from '../dev/warehouse/server.mjs';
import { DEMO_CATALOG_DIR, readCatalogDir } from '../scripts/lib/catalog-dir.mjs';
import { importWorkerModules, ROOT } from '../scripts/lib/import-ts.mjs';
import { applyMigrations } from '../scripts/lib/migrations.mjs';

/**
 * A built bundle in workerd with the bindings of wrangler.toml, wired to a local warehouse (a fresh one unless
 * `warehouse` and `sa` are given, so two bundles can share one), its D1 seeded with the demo catalog and three
 * bench keys. `inspectorPort` opens the V8 inspector (CPU profiles).
 * @param {{ bundleDir: string, scriptName?: string, name?: string, inspectorPort?: number, warehouse?: { url: string, close(): Promise<void> }, sa?: ReturnType<typeof createServiceAccount> }} opts
 */
export async function startStack({ bundleDir, scriptName = 'index.js', name = 'bench', inspectorPort, ...shared }) {
  const sa = shared.sa ?? createServiceAccount();
  const ownWarehouse = shared.warehouse === undefined;
  const warehouse =
    shared.warehouse ??
    (await startWarehouse({ project: DEV_PROJECT, serviceAccounts: [{ clientEmail: sa.clientEmail, publicKeyPem: sa.publicKeyPem }] }));
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, 'wrangler.toml'));
  const started = performance.now();
  const mf = new Miniflare({
    ...workerOptions,
    name,
    modules: true,
    scriptPath: join(bundleDir, scriptName),
    modulesRoot: bundleDir,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'], fallthrough: true }],
    bindings: {
      ...workerOptions.bindings,
      BIGQUERY_API_BASE: warehouse.url,
      GCP_SERVICE_ACCOUNT_JSON: sa.json,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123456789',
      SESSION_SECRET: 'bench-session-secret-0123456789abcdef012345678',
      // Benches send far more new queries and page reads a minute than a key may (60 and 120 by default).
      DEFAULT_CHECKS_PER_MINUTE: '1000000',
      DEFAULT_PAGE_READS_PER_MINUTE: '1000000',
    },
    host: '127.0.0.1',
    port: 0,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
  });
  const url = await mf.ready;
  const ready = performance.now();
  const first = await fetch(new URL('/healthz', url));
  await first.text();
  const firstAnswer = performance.now();

  const db = await mf.getD1Database('DB');
  /** @param {string} sql */
  const execute = async (sql) =>
    (await db.batch(unstable_splitSqlQuery(sql).map((q) => db.prepare(q)))).map(
      (r) => /** @type {Record<string, unknown>[]} */ (r.results ?? []),
    );
  await applyMigrations({ execute, close: async () => {} });
  const { buildDemoSeed } = await importWorkerModules({ 'src/seed/demo-tenants.ts': ['buildDemoSeed'] });
  const keys = {
    org: 'wqk_benchorgkey0000000000000000000000000000000',
    brand: 'wqk_benchbrandkey00000000000000000000000000000',
    other: 'wqk_benchotherkey00000000000000000000000000000',
  };
  const admins = {
    org: { email: 'org-admin@bench.test', password: 'bench-pass-1' },
    brand: { email: 'brand-admin@bench.test', password: 'bench-pass-2' },
  };
  const seed = await buildDemoSeed({ now: Date.now(), keys, admins, catalog: await readCatalogDir(DEMO_CATALOG_DIR) });
  const statements = [...seed, 'UPDATE api_keys SET daily_query_limit = 100000000'];
  await db.batch(statements.map((s) => db.prepare(s)));

  return {
    url,
    keys,
    sa,
    warehouse,
    startup: { miniflareReadyMs: ready - started, firstRequestMs: firstAnswer - ready, totalMs: firstAnswer - started },
    async close() {
      await mf.dispose();
      if (ownWarehouse) await warehouse.close();
    },
  };
}
