import type { UsageLimiter } from './usage/usage-limiter';

/** Bindings, variables and secrets the Worker reads. Defaults live in wrangler.toml `[vars]`. */
export interface Env {
  DB: D1Database;
  OAUTH_KV: KVNamespace;
  USAGE: DurableObjectNamespace<UsageLimiter>;

  BIGQUERY_API_BASE: string;
  BIGQUERY_PROJECT: string;
  BIGQUERY_LOCATION: string;
  ROW_CAP: string;
  MCP_ROW_CAP: string;
  MCP_MAX_RESULT_BYTES: string;
  DEFAULT_MAX_BYTES_BILLED: string;
  DEFAULT_DAILY_QUERY_LIMIT: string;
  DEFAULT_DAILY_BYTES_LIMIT: string;
  QUERY_TIMEOUT_MS: string;
  /** Dry runs plus requests the SQL guard refuses, per key per minute (token bucket; docs/usage-limits.md). */
  DEFAULT_CHECKS_PER_MINUTE: string;
  /** Result pages read with a cursor, per key per minute (token bucket; docs/usage-limits.md). */
  DEFAULT_PAGE_READS_PER_MINUTE: string;
  /** How long an isolate may reuse a resolved API key (ms); 0 = read D1 on every request. */
  AUTH_CACHE_TTL_MS?: string;
  /** How long an isolate may reuse its snapshot of brands and reports (ms); 0 = read D1 on every request. */
  CATALOG_CACHE_TTL_MS?: string;
  /** Browser origins allowed to call REST and MCP (comma-separated, empty by default); see src/http/cors.ts. */
  ALLOWED_ORIGINS?: string;

  /** Secrets. */
  GCP_SERVICE_ACCOUNT_JSON?: string;
  GCP_SERVICE_ACCOUNTS_BY_BRAND?: string;
  CURSOR_SECRET?: string;
  SESSION_SECRET?: string;
}

/** Reads a positive integer variable; a missing or malformed value is a deployment error, not a default. */
export function intVar(env: Env, name: keyof Env): number {
  const raw = env[name];
  const n = typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new Error(`configuration variable ${String(name)} must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Reads a whole number >= 0 (cache TTLs, where 0 means "off"); unset means 0. Malformed is a deployment error. */
export function nonNegativeIntVar(env: Env, name: 'AUTH_CACHE_TTL_MS' | 'CATALOG_CACHE_TTL_MS'): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new Error(`configuration variable ${name} must be a whole number >= 0, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Reads a required secret; missing secrets fail closed with a clear log line. */
export function requireSecret(env: Env, name: 'CURSOR_SECRET' | 'SESSION_SECRET' | 'GCP_SERVICE_ACCOUNT_JSON'): string {
  const v = env[name];
  if (!v) throw new Error(`secret ${name} is not set (wrangler secret put ${name}, or .dev.vars locally)`);
  return v;
}
