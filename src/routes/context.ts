import type { Context } from 'hono';
import type { AppEnv } from '../app-env';
import type { OpContext } from '../context';
import { configOf } from '../env';

/** Builds the transport-neutral operation context from a Hono request context. */
export function opContext(c: Context<AppEnv>): OpContext {
  return {
    env: c.env,
    config: configOf(c.env),
    principal: c.get('principal'),
    requestId: c.get('requestId'),
    log: c.get('log'),
    now: Date.now(),
    transport: 'rest',
    origin: new URL(c.req.url).origin,
    waitUntil: (p) => {
      try {
        c.executionCtx.waitUntil(p);
      } catch {
        // No execution context (direct app.request in a unit test): let the promise run on its own.
        void p;
      }
    },
  };
}
