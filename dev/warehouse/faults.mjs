// Fault injection for the local warehouse, off by default. A fault is armed for the next `count` requests
// that match it (by operation, SQL text, requestId, label, ...), via startWarehouse({ faults }),
// POST /__faults, or one request's `x-warehouse-fault` header. See docs/local-warehouse.md.
import { randomBytes } from 'node:crypto';

/** What each kind does, and which operations it can apply to (null = any). */
export const FAULT_KINDS = {
  latency: { ops: null, about: 'delay the HTTP response by `ms` (default 1000), then answer normally' },
  slowJob: { ops: ['query', 'insert'], about: 'the created job needs `ms` more before it completes (jobComplete:false until then)' },
  jobIncomplete: {
    ops: ['query', 'getQueryResults'],
    about: 'answer jobComplete:false (the job itself runs on); each poll uses one count',
  },
  http500: { ops: null, about: '500 internalError' },
  http503: { ops: null, about: '503 backendError (service unavailable)' },
  backendError: { ops: null, about: '500 backendError (`status` may set 503)' },
  quotaExceeded: { ops: null, about: '403 quotaExceeded (a project quota is used up; BigQuery ran nothing)' },
  rateLimitExceeded: { ops: null, about: '403 rateLimitExceeded (`status` may set 429, as BigQuery does for some quotas)' },
  jobInternalError: {
    ops: ['query', 'getQueryResults'],
    about:
      "400 jobInternalError: the job failed in the warehouse (BigQuery reports a job's failure as an HTTP error of the call that waits for it)",
  },
  malformedJson: { ops: null, about: '200 with a truncated JSON body' },
  html502: { ops: null, about: '502 with an HTML body, as a Google front end sends' },
  dropConnection: { ops: null, about: 'destroy the socket without answering' },
  notFound: {
    ops: ['get', 'getQueryResults', 'cancel'],
    about: '404 notFound for the job, as BigQuery may answer for a job it just reported as a 409 duplicate',
  },
  noBilledBytes: {
    ops: ['query', 'get'],
    about: 'answer normally but without `totalBytesBilled` (BigQuery leaves it out, e.g. under flat-rate pricing)',
  },
};

export const OPERATIONS = ['query', 'insert', 'getQueryResults', 'get', 'cancel'];

/**
 * @typedef {{ op?: string, method?: string, path?: string, sql?: string, requestId?: string, jobId?: string,
 *   label?: Record<string, string>, dryRun?: boolean }} FaultMatch
 * @typedef {{ kind: string, count?: number, persistent?: boolean, match?: FaultMatch, ms?: number, status?: number }} FaultSpec
 * @typedef {{ op: string, method: string, path: string, sql: string | null, requestId: string | null, jobId: string | null,
 *   labels: Record<string, string>, dryRun: boolean }} RequestFacts
 */

export class FaultSpecError extends Error {}

/** Validates a spec from a test or the control endpoint; throws FaultSpecError with a clear reason. */
export function parseFaultSpec(input) {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new FaultSpecError('fault must be a JSON object');
  const { kind, count, persistent, match, ms, status } = input;
  if (!(kind in FAULT_KINDS)) throw new FaultSpecError(`kind must be one of ${Object.keys(FAULT_KINDS).join(', ')}`);
  if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw new FaultSpecError('count must be a positive integer');
  if (persistent !== undefined && typeof persistent !== 'boolean') throw new FaultSpecError('persistent must be a boolean');
  if (ms !== undefined && (!Number.isFinite(ms) || ms < 0 || ms > 600_000)) throw new FaultSpecError('ms must be between 0 and 600000');
  if (status !== undefined && (!Number.isInteger(status) || status < 400 || status > 599))
    throw new FaultSpecError('status must be an HTTP error status');
  const m = match ?? {};
  if (typeof m !== 'object' || Array.isArray(m)) throw new FaultSpecError('match must be an object');
  for (const key of Object.keys(m)) {
    if (!['op', 'method', 'path', 'sql', 'requestId', 'jobId', 'label', 'dryRun'].includes(key))
      throw new FaultSpecError(`unknown match field ${key}`);
  }
  if (m.op !== undefined && !OPERATIONS.includes(m.op)) throw new FaultSpecError(`match.op must be one of ${OPERATIONS.join(', ')}`);
  for (const key of ['method', 'path', 'sql', 'requestId', 'jobId']) {
    if (m[key] !== undefined && typeof m[key] !== 'string') throw new FaultSpecError(`match.${key} must be a string`);
  }
  if (m.dryRun !== undefined && typeof m.dryRun !== 'boolean') throw new FaultSpecError('match.dryRun must be a boolean');
  if (m.label !== undefined && (typeof m.label !== 'object' || Object.values(m.label).some((v) => typeof v !== 'string'))) {
    throw new FaultSpecError('match.label must map label keys to string values');
  }
  return { kind, count: count ?? 1, persistent: persistent ?? false, match: m, ms: ms ?? 1000, status };
}

/** @param {FaultMatch} m @param {RequestFacts} r */
function matches(m, r) {
  if (m.op !== undefined && m.op !== r.op) return false;
  if (m.method !== undefined && m.method.toUpperCase() !== r.method) return false;
  if (m.path !== undefined && !r.path.includes(m.path)) return false;
  if (m.sql !== undefined && !(r.sql ?? '').includes(m.sql)) return false;
  if (m.requestId !== undefined && m.requestId !== r.requestId) return false;
  if (m.jobId !== undefined && m.jobId !== r.jobId) return false;
  if (m.dryRun !== undefined && m.dryRun !== r.dryRun) return false;
  if (m.label) for (const [k, v] of Object.entries(m.label)) if (r.labels[k] !== v) return false;
  return true;
}

export class FaultRegistry {
  /** @param {FaultSpec[]} initial */
  constructor(initial = []) {
    /** @type {Array<ReturnType<typeof parseFaultSpec> & { id: string, remaining: number, hits: number }>} */
    this.faults = [];
    for (const spec of initial) this.arm(spec);
  }

  arm(spec) {
    const f = parseFaultSpec(spec);
    const fault = { id: `fault_${randomBytes(6).toString('hex')}`, ...f, remaining: f.count, hits: 0 };
    this.faults.push(fault);
    return this.describe(fault);
  }

  describe(f) {
    return {
      id: f.id,
      kind: f.kind,
      count: f.count,
      persistent: f.persistent,
      remaining: f.persistent ? null : f.remaining,
      hits: f.hits,
      match: f.match,
      ms: f.ms,
      status: f.status ?? null,
    };
  }

  list() {
    return this.faults.map((f) => this.describe(f));
  }

  /** Removes one fault (by id) or all; returns how many were removed. */
  clear(id) {
    const before = this.faults.length;
    this.faults = id ? this.faults.filter((f) => f.id !== id) : [];
    return before - this.faults.length;
  }

  /**
   * Takes the first armed fault that applies to this request, consuming one count.
   * @param {RequestFacts} facts
   * @param {string[]} [kinds] restrict to these kinds (e.g. only slowJob when a job is created)
   */
  take(facts, kinds) {
    for (const f of this.faults) {
      if (kinds && !kinds.includes(f.kind)) continue;
      if (!kinds && (f.kind === 'slowJob' || f.kind === 'jobIncomplete' || f.kind === 'noBilledBytes')) continue;
      const ops = FAULT_KINDS[f.kind].ops;
      if (ops && !ops.includes(facts.op)) continue;
      if (!matches(f.match, facts)) continue;
      f.hits++;
      if (!f.persistent && --f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
      return f;
    }
    return null;
  }
}
