/**
 * The part of `node:async_hooks` the Worker uses. The runtime provides it under the `nodejs_compat` flag
 * (wrangler.toml); @cloudflare/workers-types does not declare it, and @types/node would bring all of Node's
 * globals into the Worker's type check.
 */
declare module 'node:async_hooks' {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R;
    getStore(): T | undefined;
  }
}
