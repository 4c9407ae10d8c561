// Runs inside workerd before each test file of the "workers" projects. Files of the main project share one
// workerd per vitest worker (isolate: false, see vitest.config.ts), so each file starts by wiping what the files
// before it stored: every Durable Object, which in Miniflare is also where D1 and KV keep their data. Then the
// migrations (read from migrations/ by vitest.config.ts), as a fresh deployment gets them.
import { applyD1Migrations, env, reset } from 'cloudflare:test';
import { DurableObject, WorkerEntrypoint, WorkflowEntrypoint } from 'cloudflare:workers';

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

/**
 * @cloudflare/vitest-pool-workers 0.15.1 builds SELF's entrypoint (and each Durable Object wrapper) with a
 * constructor that, on every construction, replaces its own prototype with `new Proxy(prototype, { get })` around
 * the previous one (createProxyPrototypeClass in its dist/worker/lib/cloudflare/test-internal.mjs). workerd
 * constructs the entrypoint once per SELF.fetch, so after n requests every property read on the entrypoint walks n
 * nested proxies: each request costs more than the one before, in every file after it in the same workerd. The
 * layers are all alike (an outer one only answers what the inner one left undefined, and the inner one answers
 * every key but symbols, "self" and the other kind's handler names, which the outer one also leaves undefined), so
 * wrapping such a proxy again returns it as it is. Any other Proxy is built as before.
 */
function keepOneEntrypointPrototypeProxy(): void {
  const kept = Symbol.for('test/worker-setup: one entrypoint prototype proxy');
  if (Reflect.get(globalThis, kept)) return; // already done by an earlier file in this workerd
  const NativeProxy = Proxy;
  const wrappers = [WorkerEntrypoint.prototype, DurableObject.prototype, WorkflowEntrypoint.prototype];
  const layers = new WeakSet<object>();
  const isWrapperPrototype = (target: unknown): target is object =>
    typeof target === 'object' && target !== null && wrappers.some((proto) => Object.prototype.isPrototypeOf.call(proto, target));
  Reflect.set(
    globalThis,
    'Proxy',
    new NativeProxy(NativeProxy, {
      construct(target, args: [object, ProxyHandler<object>], newTarget) {
        const [wrapped, handler] = args;
        if (layers.has(wrapped)) return wrapped;
        const proxy = Reflect.construct(target, args, newTarget) as object;
        if (isWrapperPrototype(wrapped) && Object.keys(handler).join() === 'get') layers.add(proxy);
        return proxy;
      },
    }),
  );
  Reflect.set(globalThis, kept, true);
}

keepFirstModuleRunnerWrapper();
keepOneEntrypointPrototypeProxy();
await reset();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
