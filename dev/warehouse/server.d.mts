// Types for server.mjs (imported by TypeScript tests and tooling).

export type FaultKind =
  | 'latency'
  | 'slowJob'
  | 'jobIncomplete'
  | 'http500'
  | 'http503'
  | 'backendError'
  | 'rateLimitExceeded'
  | 'malformedJson'
  | 'html502'
  | 'dropConnection';

export interface FaultMatch {
  /** query (jobs.query), insert (jobs.insert), getQueryResults, get (jobs.get), cancel. */
  op?: 'query' | 'insert' | 'getQueryResults' | 'get' | 'cancel';
  method?: string;
  /** Substring of the URL path. */
  path?: string;
  /** Substring of the job's SQL (also matches polls and cancels of that job). */
  sql?: string;
  requestId?: string;
  jobId?: string;
  label?: Record<string, string>;
  dryRun?: boolean;
}

export interface FaultSpec {
  kind: FaultKind;
  /** Matching requests it applies to. Default 1. */
  count?: number;
  /** Applies until cleared, ignoring count. Default false. */
  persistent?: boolean;
  match?: FaultMatch;
  /** latency / slowJob duration. Default 1000. */
  ms?: number;
  /** HTTP status override for error kinds (e.g. 429 for rateLimitExceeded). */
  status?: number;
}

export interface ArmedFault extends Required<Pick<FaultSpec, 'kind' | 'count' | 'persistent' | 'ms'>> {
  id: string;
  remaining: number | null;
  hits: number;
  match: FaultMatch;
  status: number | null;
}

export interface TrustedServiceAccount {
  clientEmail: string;
  publicKeyPem: string;
  /** When set, the JWT `kid` must equal it. */
  keyId?: string;
  /** Datasets this account may read (IAM per brand); default all. */
  datasets?: string[];
}

export interface StartWarehouseOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  serviceAccounts: TrustedServiceAccount[];
  /** The demo data's "today" (YYYY-MM-DD). Default: the current UTC date. */
  today?: string;
  /** Faults armed from the start. Default none. */
  faults?: FaultSpec[];
  /** Where generated demo databases are cached. Default $TMPDIR/bq-local-warehouse. */
  cacheDir?: string;
  /** Default US. */
  location?: string;
  /** DuckDB threads. Default 2. */
  threads?: number;
  /** Jobs running longer are stopped with reason `timeout`. Default 60000. */
  maxJobMs?: number;
  /** Clock for token expiry checks. Default Date.now. */
  now?: () => number;
}

export interface RecordedRequest {
  at: string;
  method: string;
  path: string;
  op: string;
  query: Record<string, string>;
  body: unknown;
  auth: { ok: true; iss: string } | { ok: false; why: string };
  status: number | null;
}

export interface Warehouse {
  /** Base URL, e.g. http://127.0.0.1:43123 (the value for BIGQUERY_API_BASE). */
  url: string;
  today: string;
  startup: { dataMs: number; engineMs: number; totalMs: number; generated: boolean };
  faults: {
    arm(spec: FaultSpec): ArmedFault;
    list(): ArmedFault[];
    clear(id?: string): number;
  };
  requests: {
    list(filter?: { op?: string; sql?: string; requestId?: string; label?: string }): RecordedRequest[];
    clear(): void;
  };
  close(): Promise<void>;
}

export function startWarehouse(opts: StartWarehouseOptions): Promise<Warehouse>;
