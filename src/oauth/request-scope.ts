import type { Env } from '../env';
import type { Logger } from '../lib/log';

/** Per-request facts the library's callbacks need but are not handed (they receive only `env`). */
export interface RequestScope {
  requestId: string;
  log: Logger;
  waitUntil: (p: Promise<unknown>) => void;
}

// Keyed by the per-request copy of `env` the worker hands the provider, which passes that same object to every
// callback and handler; a WeakMap lets the scope go with the request.
const scopes = new WeakMap<Env, RequestScope>();

export function bindRequestScope(env: Env, scope: RequestScope): void {
  scopes.set(env, scope);
}

export function requestScope(env: Env): RequestScope | undefined {
  return scopes.get(env);
}
