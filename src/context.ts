import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from './auth/principal';
import { configOf, type Config, type Env } from './env';
import { createLogger, newRequestId, type Logger } from './lib/log';

/**
 * One request's scope: what the front door (src/oauth/worker.ts) learned of the request before anything ran, and,
 * once a transport verified the caller, who it is. Built once per request and reached the same way by REST, MCP,
 * OAuth and console code: `requestScope()`, the request's AsyncLocalStorage store (one store per request, so two
 * interleaved requests of an isolate never see each other's).
 */
export interface RequestScope {
  env: Env;
  /** The deployment's variables, parsed once per isolate (configOf). */
  config: Config;
  requestId: string;
  log: Logger;
  /** The origin the client called, in its canonical form (links in results and notifications point at it). */
  origin: string;
  /** The Authorization header, parsed once: absent, a bearer token, or something else (refused as no credentials). */
  authorization: { kind: 'none' } | { kind: 'bearer'; token: string } | { kind: 'malformed' };
  waitUntil: (p: Promise<unknown>) => void;
  /** The verified caller: null until a transport authenticated it (an API key, an OAuth grant). */
  principal: Principal | null;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Extracts the bearer token; anything but `Bearer <token>` is treated as no credentials. */
function parseAuthorization(header: string | null): RequestScope['authorization'] {
  if (header === null) return { kind: 'none' };
  const m = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m?.[1] ? { kind: 'bearer', token: m[1] } : { kind: 'malformed' };
}

/** The scope of a request that has just arrived: a new request id, its logger, the parsed Authorization header. */
export function newRequestScope(request: Request, env: Env, origin: string, waitUntil: (p: Promise<unknown>) => void): RequestScope {
  const requestId = newRequestId();
  return {
    env,
    // Read on first use, so that a malformed variable fails where it always did: a 500 INTERNAL naming it.
    get config() {
      return configOf(env);
    },
    requestId,
    log: createLogger(requestId),
    origin,
    authorization: parseAuthorization(request.headers.get('authorization')),
    waitUntil,
    principal: null,
  };
}

/** Runs `fn` (and everything it awaits) in `scope`. */
export function inRequestScope<R>(scope: RequestScope, fn: () => R): R {
  return scopes.run(scope, fn);
}

/** The scope of the request being served; undefined outside one (the queue consumer, a unit test calling a function). */
export function requestScope(): RequestScope | undefined {
  return scopes.getStore();
}

/** The scope of the request being served; throws outside one (a wiring mistake: the caller expects a request). */
export function currentScope(): RequestScope {
  const scope = scopes.getStore();
  if (!scope) throw new Error('no request scope: called outside a request');
  return scope;
}

/** The bearer token the request carried, or null (no header, or not `Bearer <token>`). */
export function bearerOf(scope: RequestScope): string | null {
  return scope.authorization.kind === 'bearer' ? scope.authorization.token : null;
}

/** What every operation receives, whichever transport (REST or MCP) called it. */
export interface OpContext {
  env: Env;
  /** The deployment's variables, parsed once per isolate (configOf). */
  config: Config;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** Milliseconds since epoch; injected so operations are deterministic in tests. */
  now: number;
  transport: 'rest' | 'mcp';
  /** The origin the client called, canonical (links in results and notifications point at it). */
  origin: string;
  waitUntil: (p: Promise<unknown>) => void;
}

/**
 * The operation context of the request being served, for `transport`: its scope with the verified principal and
 * the clock read once. `principal` is the scope's unless given (a console page acts for the signed-in
 * administrator, verified by its session). Throws outside a request or with no verified caller (a wiring mistake,
 * never a caller's): an operation never runs for nobody.
 */
export function opContext(transport: OpContext['transport'], principal?: Principal): OpContext {
  const scope = currentScope();
  const caller = principal ?? scope.principal;
  if (!caller) throw new Error(`opContext(${transport}): no verified principal in this request's scope`);
  return {
    env: scope.env,
    config: scope.config,
    principal: caller,
    requestId: scope.requestId,
    log: scope.log,
    now: Date.now(),
    transport,
    origin: scope.origin,
    waitUntil: scope.waitUntil,
  };
}
