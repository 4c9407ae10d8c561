// Runs inside workerd before each test file of the "workers" projects. Files of the main project share one
// workerd per vitest worker (isolate: false, see vitest.config.ts), so each file starts by wiping what the files
// before it stored: every Durable Object, which in Miniflare is also where D1 and KV keep their data. Then the
// migrations (read from migrations/ by vitest.config.ts), as a fresh deployment gets them.
import { applyD1Migrations, env, reset } from 'cloudflare:test';

/**
 * @cloudflare/vitest-pool-workers 0.15.1 wraps the module runner's transport again for every file a shared
 * workerd runs (fixed upstream in @cloudflare/vitest-plugin 1.4.5; the pool's releases after 0.15.1 bring a
 * wrangler that needs Node 22), so each module fetch and each SELF.fetch went
 * through one more hop per earlier file. Keeping the first wrapper makes the later ones no-ops. If vitest's
 * internals move, the suite still passes, only slower: say so once instead of failing.
 */
function keepFirstModuleRunnerWrapper(): void {
  const mocker: unknown = Reflect.get(globalThis, '__vitest_mocker__');
  const runner: unknown = typeof mocker === 'object' && mocker !== null ? Reflect.get(mocker, 'moduleRunner') : undefined;
  const transport: unknown = typeof runner === 'object' && runner !== null ? Reflect.get(runner, 'transport') : undefined;
  const invoke = typeof transport === 'object' && transport !== null ? Object.getOwnPropertyDescriptor(transport, 'invoke') : undefined;
  if (!transport || !invoke) {
    console.warn('[test/worker-setup] module runner transport not found: shared-workerd files will slow down file after file');
    return;
  }
  if (!('value' in invoke)) return; // already kept by an earlier file
  const first: unknown = invoke.value;
  Object.defineProperty(transport, 'invoke', { configurable: true, get: () => first, set: () => undefined });
}

keepFirstModuleRunnerWrapper();
await reset();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
