// A local stand-in for the slice of BigQuery's REST API the Worker calls, on loopback:
//   POST /bigquery/v2/projects/{p}/jobs                 jobs.insert (dry run, or a query job)
//   GET  /bigquery/v2/projects/{p}/jobs/{jobId}         jobs.get
//   POST /bigquery/v2/projects/{p}/jobs/{jobId}/cancel  jobs.cancel
//   POST /bigquery/v2/projects/{p}/queries              jobs.query
//   GET  /bigquery/v2/projects/{p}/queries/{jobId}      jobs.getQueryResults
//   GET  /bigquery/v2/projects/{p}/datasets/{d}/tables      tables.list (references, type, labels; paged)
//   GET  /bigquery/v2/projects/{p}/datasets/{d}/tables/{t}  tables.get (the Table resource: schema, numRows, labels)
// Bearer auth is a self-signed service-account JWT, as BigQuery accepts it. Answers use BigQuery's shapes
// and error reasons. Control endpoints (no auth, loopback only): /__faults, /__requests, /__health.
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { verifyBearer } from './auth.mjs';
import { PROJECT, assertIsoDate, ensureDemoDatabase, tableSpec, utcToday } from './demo-data.mjs';
import { openEngine } from './engine.mjs';
import { encodeValue } from './encode.mjs';
import { BqError, errorBody, errorResult, invalidQuery } from './errors.mjs';
import { FAULT_KINDS, FaultRegistry, FaultSpecError, parseFaultSpec } from './faults.mjs';
import { TABLE_DOCS } from './table-docs.mjs';

const MIB = 1024 * 1024;
/** BigQuery bills at least 10 MB for each table a query reads (on-demand pricing). */
const MIN_BILLED_PER_TABLE = 10 * MIB;
/**
 * `statistics.query.referencedTables` lists at most this many: "Queries that reference more than 50 tables will not
 * have a complete list" (JobStatistics2, https://cloud.google.com/bigquery/docs/reference/rest/v2/Job#JobStatistics2).
 * Here the list is cut at exactly 50, the least Google promises; the bytes and the billing still count every table.
 */
const MAX_LISTED_TABLES = 50;
/** BigQuery caps one page of results at 10 MB of JSON when maxResults does not cap it first. */
const MAX_PAGE_BYTES = 10 * MIB;
const DEFAULT_WAIT_MS = 10_000;
const MAX_BODY_BYTES = 10 * MIB;
/** Finished jobs and their results are kept a day, as BigQuery keeps a query's temporary result table (~24 h). */
const JOB_TTL_MS = 24 * 3600_000;
/**
 * Memory bounds that may end a result's life earlier: jobs kept, and result rows kept across them (a full
 * acme.fact__orders is 500,000). A cursor's result outlives at least MAX_JOBS later queries unless the rows bound
 * is reached first (docs/local-warehouse.md, "Retention").
 */
const MAX_JOBS = 5_000;
const MAX_RETAINED_ROWS = 2_000_000;
/** How long after jobs.cancel a running job actually stops (BigQuery's cancel returns at once; the job ends later). */
const DEFAULT_CANCEL_DELAY_MS = 300;
const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
const REQUEST_ID = /^[\x21-\x7e]{1,36}$/;

/**
 * @typedef {{ clientEmail: string, publicKeyPem: string, keyId?: string, datasets?: string[] }} TrustedServiceAccount
 * @typedef {{
 *   host?: string, port?: number,
 *   serviceAccounts: TrustedServiceAccount[],
 *   today?: string, faults?: import('./faults.mjs').FaultSpec[], cacheDir?: string, location?: string,
 *   threads?: number, maxJobMs?: number, now?: () => number, cancelDelayMs?: number, project?: string,
 * }} StartWarehouseOptions
 * @typedef {{ url: string, close(): Promise<void>, today: string, project: string, startup: { dataMs: number, engineMs: number, totalMs: number, generated: boolean },
 *   faults: FaultRegistry, requests: RequestJournal }} Warehouse
 */

/**
 * Starts the local warehouse.
 * @param {StartWarehouseOptions} opts
 *   host: default 127.0.0.1. port: default 0 (a free port). serviceAccounts: the accounts whose JWTs are
 *   accepted; `datasets` limits an account to those datasets (IAM per brand), default all. today: the
 *   demo data's "today", default the current UTC date. faults: armed at start. cacheDir: where generated
 *   databases are kept, default $TMPDIR/bq-local-warehouse. location: default US. threads: DuckDB threads,
 *   default 2. maxJobMs: a job running longer is stopped, default 60000. now: clock for token expiry.
 *   project: the project hosting the datasets, default `service-v1` (`npm run dev` and the tests use
 *   DEV_PROJECT); jobs in, and references to, any other project are refused as BigQuery refuses them.
 *   cancelDelayMs: how long after jobs.cancel (which answers at once) a running job stops, default 300.
 * @returns {Promise<Warehouse>}
 */
export async function startWarehouse(opts) {
  const started = performance.now();
  if (!opts?.serviceAccounts?.length) throw new Error('startWarehouse needs at least one service account');
  const today = opts.today ?? utcToday();
  assertIsoDate(today);
  const location = opts.location ?? 'US';
  const now = opts.now ?? Date.now;
  // The project the datasets live in; jobs and references naming any other are refused, as BigQuery refuses them.
  const project = opts.project ?? PROJECT;
  const data = await ensureDemoDatabase({ today, cacheDir: opts.cacheDir, threads: opts.threads, project });
  const engineStarted = performance.now();
  const engine = await openEngine({ dbPath: data.path, project, today, location, threads: opts.threads });
  const engineMs = performance.now() - engineStarted;
  const faults = new FaultRegistry(opts.faults ?? []);
  const journal = new RequestJournal();
  const jobs = new JobStore();
  const cache = new Map();
  jobs.cache = cache;
  const ctx = {
    engine,
    project,
    faults,
    journal,
    jobs,
    location,
    now,
    accounts: opts.serviceAccounts,
    maxJobMs: opts.maxJobMs ?? 60_000,
    cancelDelayMs: opts.cancelDelayMs ?? DEFAULT_CANCEL_DELAY_MS,
    /** @type {Map<string, string>} query cache: (project, account, location, SQL text) -> id of the job holding the result */
    cache,
  };

  const server = createServer((req, res) => {
    handle(ctx, req, res).catch((err) => {
      if (!res.headersSent && !res.destroyed)
        sendError(res, new BqError(500, 'internalError', 'An internal error occurred and the request could not be completed.'));
      process.emitWarning(`local warehouse: ${err?.stack ?? err}`);
    });
  });
  server.keepAliveTimeout = 5_000;
  await /** @type {Promise<void>} */ (
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
    })
  );
  // Listening on a TCP host: an AddressInfo, never a pipe name.
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closed = false;
  return {
    url: `http://${host}:${addr.port}`,
    today,
    project,
    startup: { dataMs: data.ms, engineMs, totalMs: performance.now() - started, generated: data.generated },
    faults,
    requests: journal,
    async close() {
      if (closed) return;
      closed = true;
      jobs.cancelAll();
      await new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      });
      await jobs.settled();
      engine.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Request handling

async function handle(ctx, req, res) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path.startsWith('/__')) return control(ctx, req, res, url);
  const m = /^\/bigquery\/v2\/projects\/([^/]+)\/(jobs|queries)(?:\/([^/]+))?(\/cancel)?$/.exec(path);
  const t = /^\/bigquery\/v2\/projects\/([^/]+)\/datasets\/([^/]+)\/tables(?:\/([^/]+))?$/.exec(path);
  const method = req.method ?? 'GET';
  let op = null;
  if (t && method === 'GET') op = t[3] ? 'tablesGet' : 'tablesList';
  if (m) {
    const [, , kind, id, cancel] = m;
    if (kind === 'jobs' && !id && method === 'POST') op = 'insert';
    else if (kind === 'jobs' && id && !cancel && method === 'GET') op = 'get';
    else if (kind === 'jobs' && id && cancel && method === 'POST') op = 'cancel';
    else if (kind === 'queries' && !id && method === 'POST') op = 'query';
    else if (kind === 'queries' && id && !cancel && method === 'GET') op = 'getQueryResults';
  }
  let body = null;
  if (method === 'POST') {
    const raw = await readBody(req);
    if (raw === null) return sendError(res, new BqError(413, 'invalid', 'Request payload too large'));
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        return sendError(res, new BqError(400, 'parseError', 'Invalid JSON payload received. Unexpected token.'));
      }
    }
  }
  if (!op) return sendError(res, new BqError(404, 'notFound', `Not found: ${method} ${path}`));
  const route = /** @type {RegExpExecArray} `op` is only set when the path matched */ (m ?? t);
  const project = decodeURIComponent(route[1] ?? '');
  const jobId = m && route[3] ? decodeURIComponent(route[3]) : null;
  const tableRef = t ? { datasetId: decodeURIComponent(t[2] ?? ''), tableId: t[3] ? decodeURIComponent(t[3]) : null } : null;

  const auth = verifyBearer(req.headers.authorization, ctx.accounts, Math.floor(ctx.now() / 1000));
  const entry = ctx.journal.record({ method, path, op, query: Object.fromEntries(url.searchParams), body, auth });
  res.on('finish', () => {
    entry.status = res.statusCode;
  });
  if (!auth.ok) {
    res.setHeader('www-authenticate', 'Bearer realm="https://accounts.google.com/", error="invalid_token"');
    res.setHeader('x-local-warehouse-auth', auth.why);
    return sendError(
      res,
      auth.missing
        ? new BqError(
            401,
            'required',
            'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
            { location: 'Authorization', locationType: 'header' },
          )
        : new BqError(
            401,
            'authError',
            'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
            { location: 'Authorization', locationType: 'header' },
          ),
    );
  }

  const facts = requestFacts(ctx, op, method, path, body, jobId);
  const fault = headerFault(req) ?? ctx.faults.take(facts);
  if (fault) {
    const answered = await applyFault(fault, req, res);
    if (answered) return undefined;
  }
  const incomplete = ctx.faults.take(facts, ['jobIncomplete']) !== null;
  const slow = ctx.faults.take(facts, ['slowJob']);
  const noBilledBytes = ctx.faults.take(facts, ['noBilledBytes']) !== null;
  const call = {
    ctx,
    project,
    jobId,
    tableRef,
    body: body ?? {},
    params: url.searchParams,
    account: auth.account,
    incomplete,
    slowMs: slow?.ms ?? 0,
  };
  try {
    if (project !== ctx.project && (op === 'insert' || op === 'query')) {
      throw new BqError(
        403,
        'accessDenied',
        `Access Denied: Project ${project}: User does not have bigquery.jobs.create permission in project ${project}.`,
      );
    }
    const out = await OPERATIONS[op](call);
    if (noBilledBytes) {
      delete out.totalBytesBilled;
      if (out.statistics?.query) delete out.statistics.query.totalBytesBilled;
    }
    entry.answer = answerSummary(out);
    return send(res, 200, out);
  } catch (e) {
    if (e instanceof BqError) entry.answer = { errorReason: e.reason };
    if (e instanceof BqError) return sendError(res, e);
    throw e;
  }
}

function requestFacts(ctx, op, method, path, body, jobId) {
  const job = jobId ? ctx.jobs.get(jobId) : null;
  const sql = op === 'query' ? body?.query : op === 'insert' ? body?.configuration?.query?.query : job?.sql;
  const labels = (op === 'query' ? body?.labels : op === 'insert' ? body?.configuration?.labels : job?.labels) ?? {};
  const dryRun = op === 'query' ? body?.dryRun === true : op === 'insert' ? body?.configuration?.dryRun === true : false;
  const requestId = op === 'query' ? (body?.requestId ?? null) : (job?.requestId ?? null);
  return {
    op,
    method,
    path,
    sql: typeof sql === 'string' ? sql : null,
    requestId,
    jobId,
    labels: typeof labels === 'object' && labels ? labels : {},
    dryRun,
  };
}

/** A fault requested by the request itself (direct callers and tests): `x-warehouse-fault: <kind>` or a JSON spec. */
function headerFault(req) {
  const h = req.headers['x-warehouse-fault'];
  if (typeof h !== 'string' || !h) return null;
  try {
    return parseFaultSpec(h.trim().startsWith('{') ? JSON.parse(h) : { kind: h.trim() });
  } catch {
    return null;
  }
}

/** @returns {Promise<boolean>} true when the fault answered (or dropped) the request. */
async function applyFault(fault, req, res) {
  switch (fault.kind) {
    case 'latency':
      await sleepUnlessClosed(fault.ms, req);
      return res.destroyed;
    case 'http500':
      sendError(
        res,
        new BqError(
          fault.status ?? 500,
          'internalError',
          'An internal error occurred and the request could not be completed. This is usually caused by a transient issue. Retrying the job with back-off as described in the BigQuery SLA should solve the problem: https://cloud.google.com/bigquery/sla.',
        ),
      );
      return true;
    case 'http503':
      sendError(res, new BqError(fault.status ?? 503, 'backendError', 'The service is currently unavailable.'));
      return true;
    case 'backendError':
      sendError(
        res,
        new BqError(fault.status ?? 500, 'backendError', 'Error encountered during execution. Retrying may solve the problem.'),
      );
      return true;
    case 'quotaExceeded':
      sendError(
        res,
        new BqError(
          fault.status ?? 403,
          'quotaExceeded',
          'Quota exceeded: Your project exceeded quota for concurrent queries. For more information, see https://cloud.google.com/bigquery/docs/troubleshoot-quotas',
        ),
      );
      return true;
    case 'rateLimitExceeded': {
      const status = fault.status ?? 403;
      sendError(
        res,
        new BqError(
          status,
          'rateLimitExceeded',
          'Exceeded rate limits: too many api requests per user per method for this user_method. For more information, see https://cloud.google.com/bigquery/docs/troubleshoot-quotas',
          { status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'PERMISSION_DENIED' },
        ),
      );
      return true;
    }
    case 'jobInternalError':
      sendError(
        res,
        new BqError(
          fault.status ?? 400,
          'jobInternalError',
          'The job encountered an internal error during execution and was unable to complete successfully.',
        ),
      );
      return true;
    case 'malformedJson':
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end('{\n  "kind": "bigquery#queryResponse",\n  "schema": {\n    "fields": [\n      {\n        "name": "f0_",');
      return true;
    case 'html502':
      res.writeHead(502, { 'content-type': 'text/html; charset=UTF-8' });
      res.end(
        '<!DOCTYPE html>\n<html lang=en><meta charset=utf-8><title>Error 502 (Server Error)!!1</title><p><b>502.</b> <ins>That’s an error.</ins><p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>',
      );
      return true;
    case 'dropConnection':
      req.socket.destroy();
      return true;
    case 'notFound': {
      const jobId = /\/(?:jobs|queries)\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
      sendError(res, new BqError(404, 'notFound', `Not found: Job ${decodeURIComponent(jobId)}`));
      return true;
    }
    default:
      return false;
  }
}

function sleepUnlessClosed(ms, req) {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      req.socket.off('close', done);
      resolve(undefined);
    }
    req.socket.once('close', done);
  });
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, obj, headers = {}) {
  if (res.destroyed) return;
  const json = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

function sendError(res, err) {
  send(res, err.httpStatus, errorBody(err));
}

// ---------------------------------------------------------------------------------------------------------
// BigQuery operations

/** Legacy REST type names, as tables.get spells a column's type (https://cloud.google.com/bigquery/docs/reference/rest/v2/tables#TableFieldSchema). */
const REST_TYPE = { INT64: 'INTEGER', FLOAT64: 'FLOAT', BOOL: 'BOOLEAN', STRUCT: 'RECORD' };

/** First and last day of each table's `coverage` column, read once per engine (the data file is read-only). */
const coverageCache = new WeakMap();

async function coverageOf(ctx, datasetName, tableName) {
  const cov = TABLE_DOCS[tableName]?.coverage;
  if (!cov) return null;
  let perEngine = coverageCache.get(ctx.engine);
  if (!perEngine) coverageCache.set(ctx.engine, (perEngine = new Map()));
  const key = `${datasetName}.${cov.table}.${cov.column}`;
  let found = perEngine.get(key);
  if (!found) {
    const sql = `SELECT strftime(min(CAST("${cov.column}" AS DATE)), '%Y-%m-%d'), strftime(max(CAST("${cov.column}" AS DATE)), '%Y-%m-%d') FROM "${ctx.project}"."${datasetName}"."${cov.table}"`;
    found = ctx.engine.exclusive(async () => (await ctx.engine.conn.runAndReadAll(sql)).getRowsJS()[0] ?? [null, null]);
    perEngine.set(key, found);
  }
  const [first, last] = await found;
  return first && last ? { first: String(first), last: String(last) } : null;
}

/** The dataset of a tables.* call, if the caller's account may read it (403 otherwise, 404 when it does not exist). */
function readableDataset(call, denied, what) {
  const { ctx, project, account } = call;
  const { datasetId } = call.tableRef;
  const ds = project === ctx.project ? ctx.engine.catalog.get(datasetId.toLowerCase()) : undefined;
  if (!ds) throw new BqError(404, 'notFound', `Not found: Dataset ${project}:${datasetId}`);
  if (account.datasets && !account.datasets.some((d) => d.toLowerCase() === ds.name.toLowerCase())) {
    throw new BqError(403, 'accessDenied', `Access Denied: ${what}: ${denied}`);
  }
  return ds;
}

/** What tables.list and tables.get both say of a table: reference, type, labels (layer and coverage), creation time. */
async function tableSummary(ctx, datasetName, tableName) {
  const coverage = await coverageOf(ctx, datasetName, tableName);
  return {
    kind: 'bigquery#table',
    id: `${ctx.project}:${datasetName}.${tableName}`,
    tableReference: { projectId: ctx.project, datasetId: datasetName, tableId: tableName },
    type: 'TABLE',
    labels: {
      layer: tableSpec(datasetName, tableName, ctx.engine.today)?.layer ?? 'raw',
      ...(coverage ? { data_first_day: coverage.first, data_last_day: coverage.last } : {}),
    },
    creationTime: String(Date.parse(`${ctx.engine.today}T00:00:00Z`)),
  };
}

const OPERATIONS = {
  /**
   * tables.get: the Table resource (https://cloud.google.com/bigquery/docs/reference/rest/v2/tables/get), with
   * the fields BigQuery fills for a native table: schema (with column descriptions), numRows and numBytes
   * (int64 as decimal strings), description, labels, type, creation and modification times. Needs
   * bigquery.tables.get on the dataset: an account limited to other datasets gets 403, an unknown table 404.
   */
  async tablesGet(call) {
    const { ctx, project } = call;
    const { datasetId, tableId } = /** @type {{ datasetId: string, tableId: string }} */ (call.tableRef);
    const display = `${project}:${datasetId}.${tableId}`;
    const ds = readableDataset(
      call,
      `Permission bigquery.tables.get denied on table ${display} (or it may not exist).`,
      `Table ${display}`,
    );
    const table = ds.tables.get(tableId.toLowerCase());
    const meta = table ? tableSpec(ds.name, table.name, ctx.engine.today) : undefined;
    if (!table || !meta) throw new BqError(404, 'notFound', `Not found: Table ${display}`);
    const docs = TABLE_DOCS[table.name];
    const numBytes = [...table.columns.values()].reduce((sum, c) => sum + c.bytes, 0);
    return {
      ...(await tableSummary(ctx, ds.name, table.name)),
      etag: createHash('sha256').update(`${ds.name}.${table.name}.${ctx.engine.today}`).digest('base64').slice(0, 22),
      selfLink: `https://bigquery.googleapis.com/bigquery/v2/projects/${ctx.project}/datasets/${ds.name}/tables/${table.name}`,
      description: meta.description,
      schema: {
        fields: meta.columns.map(([name, type]) => ({
          name,
          type: REST_TYPE[type] ?? type,
          mode: 'NULLABLE',
          ...(docs?.columns[name] ? { description: docs.columns[name] } : {}),
        })),
      },
      numBytes: String(numBytes),
      numLongTermBytes: '0',
      numRows: String(table.rows),
      lastModifiedTime: String(Date.parse(`${ctx.engine.today}T00:00:00Z`)),
      location: ctx.location,
    };
  },

  /**
   * tables.list (https://cloud.google.com/bigquery/docs/reference/rest/v2/tables/list): each table's reference,
   * type, labels and creation time (no schema, description or row count: tables.get has those), in pages of
   * `maxResults` with `nextPageToken`.
   */
  async tablesList(call) {
    const { ctx, project, params } = call;
    const { datasetId } = /** @type {{ datasetId: string }} */ (call.tableRef);
    const ds = readableDataset(
      call,
      `Permission bigquery.tables.list denied on dataset ${project}:${datasetId} (or it may not exist).`,
      `Dataset ${project}:${datasetId}`,
    );
    const names = [...ds.tables.values()]
      .map((t) => t.name)
      .filter((n) => tableSpec(ds.name, n, ctx.engine.today) !== undefined)
      .sort();
    const maxResults = optionalCount(params.get('maxResults') ?? undefined, 'maxResults') ?? 1000;
    const token = params.get('pageToken');
    const start = token === null ? 0 : Number(Buffer.from(token, 'base64url').toString('utf8'));
    if (!Number.isInteger(start) || start < 0 || start > names.length) throw new BqError(400, 'invalid', `Invalid page token: ${token}`);
    const page = names.slice(start, start + Math.max(1, maxResults));
    const next = start + page.length;
    return {
      kind: 'bigquery#tableList',
      etag: createHash('sha256').update(`${ds.name}.${ctx.engine.today}`).digest('base64').slice(0, 22),
      tables: await Promise.all(page.map((name) => tableSummary(ctx, ds.name, name))),
      totalItems: names.length,
      ...(next < names.length ? { nextPageToken: Buffer.from(String(next), 'utf8').toString('base64url') } : {}),
    };
  },

  /** jobs.query */
  async query(call) {
    const { ctx, body } = call;
    const q = validateQueryRequest(body.query, body.useLegacySql, body);
    const location = body.location ?? ctx.location;
    const labels = validateLabels(body.labels);
    const maxResults = optionalCount(body.maxResults, 'maxResults');
    const waitMs = optionalCount(body.timeoutMs, 'timeoutMs') ?? DEFAULT_WAIT_MS;
    const int64Timestamp = body.formatOptions?.useInt64Timestamp === true;
    const jobTimeoutMs = optionalCount(body.jobTimeoutMs, 'jobTimeoutMs');
    const mode = body.jobCreationMode ?? 'JOB_CREATION_MODE_UNSPECIFIED';
    if (!['JOB_CREATION_MODE_UNSPECIFIED', 'JOB_CREATION_REQUIRED', 'JOB_CREATION_OPTIONAL'].includes(mode)) {
      throw new BqError(400, 'invalid', `Invalid value for jobCreationMode: ${JSON.stringify(mode)}`);
    }
    // requestId is validated but not used to find an earlier job: BigQuery documents its de-duplication for
    // mutating queries only ("Read only queries can ignore this token"), so a resent SELECT runs again.
    const requestId = body.requestId;
    if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
      throw new BqError(400, 'invalid', 'Invalid requestId: it must be at most 36 printable ASCII characters.');
    }
    const useCache = body.useQueryCache !== false;
    if (body.dryRun === true) {
      const cached = useCache ? cachedJob(ctx, call, location, q) : null;
      const analysis = await analyze(ctx, q, call, location);
      const out = {
        kind: 'bigquery#queryResponse',
        jobReference: { projectId: call.project, location },
        totalBytesProcessed: cached ? '0' : String(analysis.totalBytesProcessed),
        jobComplete: true,
        cacheHit: cached !== null,
      };
      if (analysis.runnable) out.schema = { fields: analysis.fields };
      return out;
    }
    const job = await newQueryJob(ctx, call, {
      sql: q,
      location,
      labels,
      requestId,
      maximumBytesBilled: body.maximumBytesBilled,
      useCache,
      jobTimeoutMs,
    });
    const out = /** @type {any} */ (await queryResponse(ctx, job, { maxResults, waitMs, int64Timestamp, incomplete: call.incomplete }));
    if (mode === 'JOB_CREATION_OPTIONAL' && out.jobComplete && out.pageToken === undefined) {
      // Short query optimized mode: a query that finished within the wait and whose whole result is in this
      // answer runs without a job. BigQuery then sends no jobReference, only a queryId, and the result cannot be
      // read again; a job is created (jobCreationReason) when it runs long or the result needs more pages.
      ctx.jobs.forget(job.id);
      const { jobReference: _ref, ...rest } = out;
      return { ...rest, queryId: `query_${job.id.slice(4)}` };
    }
    if (mode === 'JOB_CREATION_OPTIONAL') out.jobCreationReason = { code: out.jobComplete ? 'LARGE_RESULTS' : 'LONG_RUNNING' };
    return out;
  },

  /** jobs.insert: a dry run answers at once; a query job starts and is reported as it stands. */
  async insert(call) {
    const { ctx, body } = call;
    const config = body.configuration;
    if (!config || typeof config !== 'object' || !config.query || typeof config.query !== 'object') {
      throw new BqError(400, 'invalid', 'Required parameter is missing: configuration.query');
    }
    const q = validateQueryRequest(config.query.query, config.query.useLegacySql, config.query);
    const location = body.jobReference?.location ?? ctx.location;
    const labels = validateLabels(config.labels);
    const useCache = config.query.useQueryCache !== false;
    const jobTimeoutMs = optionalCount(config.jobTimeoutMs, 'jobTimeoutMs');
    const wanted = body.jobReference?.jobId;
    if (wanted !== undefined && config.dryRun !== true) {
      if (typeof wanted !== 'string' || !/^[A-Za-z0-9_-]{1,1024}$/.test(wanted)) throw new BqError(400, 'invalid', 'Invalid job ID');
      if (ctx.jobs.get(wanted) || ctx.jobs.wasUsed(wanted))
        throw new BqError(409, 'duplicate', `Already Exists: Job ${call.project}:${location}.${wanted}`);
    }
    if (config.dryRun === true) {
      const cached = useCache ? cachedJob(ctx, call, location, q) : null;
      const analysis = await analyze(ctx, q, call, location);
      const created = String(ctx.now());
      return {
        kind: 'bigquery#job',
        etag: etag(),
        configuration: {
          query: { query: q, priority: 'INTERACTIVE', useLegacySql: false },
          dryRun: true,
          jobType: 'QUERY',
          ...(labels ? { labels } : {}),
        },
        jobReference: { projectId: call.project, location },
        statistics: {
          creationTime: created,
          totalBytesProcessed: cached ? '0' : String(analysis.totalBytesProcessed),
          query: queryStatistics(analysis, 0, { cacheHit: cached !== null }),
        },
        status: { state: 'DONE' },
        principal_subject: `serviceAccount:${call.account.clientEmail}`,
        user_email: call.account.clientEmail,
      };
    }
    const job = await newQueryJob(ctx, call, {
      sql: q,
      location,
      labels,
      requestId: null,
      maximumBytesBilled: config.query.maximumBytesBilled,
      jobId: wanted,
      useCache,
      jobTimeoutMs,
    });
    await within(job.done, 0);
    return jobResource(job);
  },

  /** jobs.get */
  async get(call) {
    return jobResource(findJob(call));
  },

  /**
   * jobs.cancel answers at once with the job as it stands (usually still RUNNING, without statistics); the job
   * stops `cancelDelayMs` later and ends DONE with errorResult `stopped`, billing what it read. As Google documents:
   * "This call will return immediately, and the client will need to poll for the job status to see if the cancel
   * completed successfully. Cancelled jobs may still incur costs."
   */
  async cancel(call) {
    const job = findJob(call);
    if (job.state !== 'DONE' && !job.cancelRequested) {
      job.cancelRequested = true;
      const timer = setTimeout(() => cancelJob(job), call.ctx.cancelDelayMs);
      timer.unref?.();
    }
    return { kind: 'bigquery#jobCancelResponse', job: jobResource(job) };
  },

  /** jobs.getQueryResults */
  async getQueryResults(call) {
    const job = findJob(call);
    // A query's result lives in an anonymous table of the account that ran it: another account (a brand whose
    // credential changed since) may not read it, as on BigQuery.
    if (job.email && job.email !== call.account.clientEmail) {
      throw new BqError(
        403,
        'accessDenied',
        `Access Denied: Table ${job.project}:_${createHash('sha256').update(job.email).digest('hex').slice(0, 40)}.anon${job.id}: ` +
          'User does not have permission to query table, or perhaps it does not exist.',
      );
    }
    const p = call.params;
    const int64Timestamp = p.get('formatOptions.useInt64Timestamp') === 'true';
    const waitMs = optionalCount(p.get('timeoutMs') ?? undefined, 'timeoutMs') ?? DEFAULT_WAIT_MS;
    const maxResults = optionalCount(p.get('maxResults') ?? undefined, 'maxResults');
    let start = optionalCount(p.get('startIndex') ?? undefined, 'startIndex') ?? 0;
    const token = p.get('pageToken');
    if (token) start = decodePageToken(token, job.id);
    const complete = !call.incomplete && (await waitFor(job, waitMs));
    if (!complete) return { kind: 'bigquery#getQueryResultsResponse', etag: etag(), jobReference: jobReference(job), jobComplete: false };
    if (job.error) throw job.error;
    return {
      kind: 'bigquery#getQueryResultsResponse',
      etag: etag(),
      schema: { fields: job.analysis.fields },
      jobReference: jobReference(job),
      ...pageOf(job, start, maxResults, int64Timestamp),
      totalBytesProcessed: job.cachedFrom ? '0' : String(job.analysis.totalBytesProcessed),
      jobComplete: true,
      cacheHit: job.cachedFrom !== null,
    };
  },
};

function validateQueryRequest(query, useLegacySql, holder) {
  if (typeof query !== 'string' || query.trim() === '') throw new BqError(400, 'invalid', 'Required parameter is missing: query');
  // BigQuery's REST default is legacy SQL; the Worker must always ask for GoogleSQL.
  if (useLegacySql !== false) {
    throw invalidQuery(
      'Legacy SQL is not supported by the local warehouse: send useLegacySql: false (the REST API defaults to legacy SQL)',
    );
  }
  if (holder.queryParameters?.length) throw invalidQuery('Query parameters are not supported by the local warehouse');
  return query;
}

function validateLabels(labels) {
  if (labels === undefined || labels === null) return undefined;
  if (typeof labels !== 'object' || Array.isArray(labels))
    throw new BqError(400, 'invalid', 'Invalid value for labels: expected an object');
  const entries = Object.entries(labels);
  if (entries.length > 64) throw new BqError(400, 'invalid', 'Too many labels: at most 64 are allowed');
  for (const [k, v] of entries) {
    if (!LABEL_KEY.test(k))
      throw new BqError(
        400,
        'invalid',
        `Label key "${k}" has invalid characters: keys start with a lowercase letter and use lowercase letters, digits, "_" and "-", at most 63 characters`,
      );
    if (typeof v !== 'string' || !LABEL_VALUE.test(v))
      throw new BqError(
        400,
        'invalid',
        `Label value "${String(v)}" for key "${k}" has invalid characters: lowercase letters, digits, "_" and "-", at most 63 characters`,
      );
  }
  return labels;
}

function optionalCount(v, name) {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (!Number.isInteger(n) || n < 0) throw new BqError(400, 'invalid', `Invalid value for ${name}: ${JSON.stringify(v)}`);
  return n;
}

async function analyze(ctx, sql, call, location) {
  const analysis = await ctx.engine.analyze(sql, { jobProject: call.project, allowedDatasets: call.account.datasets ?? null });
  if (String(location).toUpperCase() !== String(ctx.location).toUpperCase() && analysis.referencedTables.length > 0) {
    const t = analysis.referencedTables[0];
    throw new BqError(404, 'notFound', `Not found: Dataset ${t.projectId}:${t.datasetId} was not found in location ${location}`);
  }
  return analysis;
}

/** Query cache key: BigQuery caches per user and project, by the exact query text. */
function cacheKey(call, location, sql) {
  return `${call.project}\n${call.account.clientEmail}\n${String(location).toUpperCase()}\n${sql}`;
}

/**
 * Non-deterministic functions make a query uncacheable ("Queries that use non-deterministic functions such as
 * CURRENT_TIMESTAMP() or RAND() are not cached", BigQuery: Using cached query results). A textual check: it may
 * also skip the cache for a query that only mentions such a name in a string, which only costs a cache miss.
 */
const NON_DETERMINISTIC = /\b(?:CURRENT_(?:DATE|DATETIME|TIME|TIMESTAMP)|RAND|GENERATE_UUID|SESSION_USER|NOW)\b/i;

/**
 * Why a query's result is never put in the query cache, or null when it may be. Google caches only what it
 * documents; each rule is in docs/local-warehouse.md with its link:
 * - non-deterministic functions and wildcard tables: "Query results are not cached ... If the query uses
 *   non-deterministic functions ... If the query runs against multiple tables using a wildcard"
 *   (https://cloud.google.com/bigquery/docs/cached-results#cache-exceptions);
 * - INFORMATION_SCHEMA: "Because INFORMATION_SCHEMA queries are not cached, you are charged each time"
 *   (https://cloud.google.com/bigquery/docs/information-schema-intro#pricing).
 * A job-less run (JOB_CREATION_OPTIONAL) is left out by the caller: nothing documents that it fills the cache.
 */
function uncacheable(sql, analysis) {
  if (NON_DETERMINISTIC.test(sql)) return 'non-deterministic';
  if (analysis.readsWildcard) return 'wildcard';
  if (analysis.informationSchemaPerTable?.some(Boolean)) return 'INFORMATION_SCHEMA';
  return null;
}

/** The finished job whose result a repeat of `sql` would be served from, or null. */
function cachedJob(ctx, call, location, sql) {
  const id = ctx.cache.get(cacheKey(call, location, sql));
  const job = id ? ctx.jobs.get(id) : null;
  return job && job.state === 'DONE' && !job.error && job.result ? job : null;
}

/**
 * Starts a query job, or answers it from the query cache (a new job, DONE at once, 0 bytes, cacheHit).
 * @param {any} ctx
 * @param {any} call
 * @param {{ sql: string, location: string, labels: any, requestId: string | null | undefined, maximumBytesBilled?: string,
 *   jobId?: string, useCache: boolean, jobTimeoutMs?: number }} opts
 */
async function newQueryJob(ctx, call, { sql, location, labels, requestId, maximumBytesBilled, jobId, useCache, jobTimeoutMs }) {
  // A request carrying a slowJob fault is never a cache hit: the fault asks for a job that runs.
  const cached = useCache && call.slowMs === 0 ? cachedJob(ctx, call, location, sql) : null;
  const analysis = await analyze(ctx, sql, call, location);
  const job = startJob(ctx, call, {
    sql,
    analysis,
    location,
    labels,
    requestId,
    maximumBytesBilled,
    jobId,
    cachedFrom: cached,
    jobTimeoutMs,
  });
  if (!cached && useCache && uncacheable(sql, analysis) === null) {
    const key = cacheKey(call, location, sql);
    job.done?.then(() => {
      if (job.error || !job.result || job.hidden) return;
      ctx.cache.set(key, job.id);
      job.cacheKey = key;
    });
  }
  return job;
}

/**
 * Bytes billed: per table read, the bytes scanned rounded up to a MiB, at least 10 MiB; nothing for 0 bytes
 * (https://cloud.google.com/bigquery/pricing#on_demand_pricing). An INFORMATION_SCHEMA view bills its 10 MiB
 * minimum on every run, whatever it reads ("INFORMATION_SCHEMA queries are billed at a minimum of 10 MB",
 * https://cloud.google.com/bigquery/docs/information-schema-intro#pricing).
 */
function bytesBilled(analysis) {
  return analysis.billedPerTable.reduce((sum, b, i) => {
    if (b === 0 && !analysis.informationSchemaPerTable?.[i]) return sum;
    return sum + Math.max(MIN_BILLED_PER_TABLE, Math.ceil(b / MIB) * MIB);
  }, 0);
}

function queryStatistics(analysis, billed, { cacheHit = false } = {}) {
  const q = {
    totalBytesProcessed: cacheHit ? '0' : String(analysis.totalBytesProcessed),
    totalBytesBilled: String(billed),
    totalBytesProcessedAccuracy: 'PRECISE',
    cacheHit,
    statementType: analysis.statementType,
  };
  // BigQuery omits empty repeated fields, and the reference lists of a cache hit ("referenced_tables: only
  // populated for query jobs that are not cache hits", INFORMATION_SCHEMA.JOBS).
  if (cacheHit) {
    if (analysis.runnable) q.schema = { fields: analysis.fields };
    return q;
  }
  if (analysis.referencedTables.length) q.referencedTables = analysis.referencedTables.slice(0, MAX_LISTED_TABLES);
  if (analysis.referencedRoutines.length) q.referencedRoutines = analysis.referencedRoutines;
  if (analysis.runnable) q.schema = { fields: analysis.fields };
  return q;
}

// ---------------------------------------------------------------------------------------------------------
// Jobs

class JobStore {
  constructor() {
    /** @type {Map<string, any>} */
    this.jobs = new Map();
    /** Ids of jobs no longer held: a job id stays taken (BigQuery refuses a reused id with 409 duplicate). */
    this.used = new Set();
    /** @type {Map<string, string> | null} the query cache, whose entries go with the jobs they point at */
    this.cache = null;
  }

  add(job) {
    this.prune(job.createdAt);
    this.jobs.set(job.id, job);
  }

  get(id) {
    return this.jobs.get(id) ?? null;
  }

  wasUsed(id) {
    return this.used.has(id);
  }

  /**
   * Hides a job that ran without one (JOB_CREATION_OPTIONAL): no call can find it, like on BigQuery, and its result
   * serves no query cache.
   */
  forget(id) {
    const job = this.jobs.get(id);
    if (!job) return;
    job.hidden = true;
    // Nothing documents that a job-less run fills the query cache, so it does not here: a repeat runs and bills.
    if (job.cacheKey && this.cache && this.cache.get(job.cacheKey) === id) this.cache.delete(job.cacheKey);
    job.cacheKey = undefined;
  }

  /** Forgets finished jobs, oldest first, past their TTL or while too many jobs or result rows are held. */
  prune(now) {
    const cutoff = now - JOB_TTL_MS;
    let rows = 0;
    for (const job of this.jobs.values()) if (!job.cachedFrom) rows += job.result?.total ?? 0;
    for (const [id, job] of this.jobs) {
      if (this.jobs.size <= MAX_JOBS && rows <= MAX_RETAINED_ROWS && job.createdAt > cutoff) break;
      if (job.state !== 'DONE') continue;
      if (!job.cachedFrom) rows -= job.result?.total ?? 0;
      this.jobs.delete(id);
      if (job.cacheKey && this.cache?.get(job.cacheKey) === id) this.cache.delete(job.cacheKey);
      if (this.used.size > 100_000) this.used.clear();
      this.used.add(id);
    }
  }

  cancelAll() {
    for (const job of this.jobs.values()) if (job.state !== 'DONE') cancelJob(job);
  }

  async settled() {
    await Promise.all([...this.jobs.values()].map((j) => j.done));
  }
}

/**
 * @param {any} ctx
 * @param {any} call
 * @param {{ sql: string, analysis: any, location: string, labels: any, requestId?: string | null, maximumBytesBilled?: string, jobId?: string,
 *   cachedFrom?: any, jobTimeoutMs?: number }} job
 */
function startJob(ctx, call, { sql, analysis, location, labels, requestId, maximumBytesBilled, jobId, cachedFrom, jobTimeoutMs }) {
  if (!analysis.runnable) {
    throw new BqError(
      403,
      'accessDenied',
      `Access Denied: the local warehouse is read-only; ${analysis.statementType} statements are not allowed.`,
    );
  }
  // A cache hit bills nothing ("you aren't charged for queries that use cached results").
  const billed = cachedFrom ? 0 : bytesBilled(analysis);
  if (maximumBytesBilled !== undefined && maximumBytesBilled !== null) {
    const max = Number(maximumBytesBilled);
    if (!Number.isSafeInteger(max) || max < 0)
      throw new BqError(400, 'invalid', `Invalid value for maximumBytesBilled: ${JSON.stringify(maximumBytesBilled)}`);
    if (billed > max) {
      throw new BqError(400, 'bytesBilledLimitExceeded', `Query exceeded limit for bytes billed: ${max}. ${billed} or higher required.`);
    }
  }
  const job = {
    id: jobId ?? `job_${randomBytes(18).toString('base64url')}`,
    project: call.project,
    location,
    sql,
    labels,
    requestId: requestId ?? null,
    email: call.account.clientEmail,
    analysis,
    billed,
    maximumBytesBilled,
    state: 'RUNNING',
    createdAt: ctx.now(),
    startedAt: ctx.now(),
    endedAt: null,
    result: null,
    error: null,
    conn: null,
    cancelled: false,
    cancelRequested: false,
    cachedFrom: cachedFrom ?? null,
    jobTimeoutMs: jobTimeoutMs ?? null,
    done: /** @type {Promise<void> | null} */ (null),
  };
  if (cachedFrom) {
    job.result = cachedFrom.result;
    job.state = 'DONE';
    job.endedAt = job.createdAt;
    job.done = Promise.resolve();
  } else job.done = runJob(ctx, job, call.slowMs);
  ctx.jobs.add(job);
  return job;
}

async function runJob(ctx, job, slowMs) {
  // The job's own jobTimeoutMs, when shorter than the warehouse's limit, stops it as BigQuery would.
  const limitMs = job.jobTimeoutMs ? Math.min(job.jobTimeoutMs, ctx.maxJobMs) : ctx.maxJobMs;
  const limit = setTimeout(() => {
    job.timedOut = true;
    job.wake?.();
    job.conn?.interrupt();
  }, limitMs);
  try {
    if (slowMs > 0)
      await within(
        new Promise((resolve) => {
          job.wake = resolve;
        }),
        slowMs,
      );
    if (job.timedOut) throw new BqError(400, 'timeout', 'timed out');
    if (job.cancelled) throw new BqError(400, 'stopped', 'Job execution was cancelled: User requested cancellation');
    const result = await ctx.engine.execute(job.analysis, (conn) => {
      job.conn = conn;
    });
    const offsets = [];
    let total = 0;
    for (let i = 0; i < result.chunkCount; i++) {
      offsets.push(total);
      total += result.getChunk(i).rowCount;
    }
    job.result = { result, types: result.columnTypes(), offsets, total, cache: { index: -1, rows: [] } };
  } catch (e) {
    if (job.timedOut)
      job.error = new BqError(
        400,
        'timeout',
        `Operation timed out after ${Math.round(limitMs / 1000)} seconds. Consider reducing the amount of work performed by your operation so that it can complete within this limit.`,
      );
    else if (job.cancelled) job.error = new BqError(400, 'stopped', 'Job execution was cancelled: User requested cancellation');
    else
      job.error =
        e instanceof BqError ? e : new BqError(500, 'internalError', 'An internal error occurred and the request could not be completed.');
  } finally {
    clearTimeout(limit);
    job.conn = null;
    job.state = 'DONE';
    job.endedAt = ctx.now();
  }
}

function cancelJob(job) {
  if (job.state === 'DONE') return;
  job.cancelled = true;
  job.wake?.();
  job.conn?.interrupt();
}

function findJob(call) {
  const job = call.jobId ? call.ctx.jobs.get(call.jobId) : null;
  const location = call.params.get('location');
  if (!job || job.hidden || job.project !== call.project || (location && location.toUpperCase() !== job.location.toUpperCase())) {
    throw new BqError(404, 'notFound', `Not found: Job ${call.project}:${location ?? call.ctx.location}.${call.jobId}`);
  }
  return job;
}

async function waitFor(job, ms) {
  if (job.state === 'DONE') return true;
  await within(job.done, ms);
  return job.state === 'DONE';
}

async function queryResponse(ctx, job, { maxResults, waitMs, int64Timestamp, incomplete }) {
  const complete = !incomplete && (await waitFor(job, waitMs));
  if (!complete) return { kind: 'bigquery#queryResponse', jobReference: jobReference(job), jobComplete: false };
  if (job.error) throw job.error;
  return {
    kind: 'bigquery#queryResponse',
    schema: { fields: job.analysis.fields },
    jobReference: jobReference(job),
    ...pageOf(job, 0, maxResults, int64Timestamp),
    totalBytesProcessed: job.cachedFrom ? '0' : String(job.analysis.totalBytesProcessed),
    totalBytesBilled: String(job.billed),
    jobComplete: true,
    cacheHit: job.cachedFrom !== null,
    creationTime: String(job.createdAt),
    startTime: String(job.startedAt),
    endTime: String(job.endedAt),
  };
}

function jobReference(job) {
  return { projectId: job.project, jobId: job.id, location: job.location };
}

function jobResource(job) {
  const status = { state: job.state };
  if (job.error) {
    status.errorResult = errorResult(job.error);
    status.errors = [errorResult(job.error)];
  }
  const statistics = { creationTime: String(job.createdAt), startTime: String(job.startedAt) };
  if (job.state === 'DONE') {
    statistics.endTime = String(job.endedAt);
    statistics.totalBytesProcessed = job.cachedFrom ? '0' : String(job.analysis.totalBytesProcessed);
    statistics.query = queryStatistics(job.analysis, job.billed, { cacheHit: job.cachedFrom !== null });
  }
  const query = { query: job.sql, priority: 'INTERACTIVE', useLegacySql: false };
  const config = job.jobTimeoutMs ? { jobTimeoutMs: String(job.jobTimeoutMs) } : {};
  if (job.maximumBytesBilled !== undefined) query.maximumBytesBilled = String(job.maximumBytesBilled);
  return {
    kind: 'bigquery#job',
    etag: etag(),
    id: `${job.project}:${job.location}.${job.id}`,
    selfLink: `https://bigquery.googleapis.com/bigquery/v2/projects/${job.project}/jobs/${job.id}?location=${job.location}`,
    user_email: job.email,
    configuration: { query, jobType: 'QUERY', ...config, ...(job.labels ? { labels: job.labels } : {}) },
    jobReference: jobReference(job),
    statistics,
    status,
    principal_subject: `serviceAccount:${job.email}`,
  };
}

/** One page of rows from `start`: at most maxResults rows and about 10 MB of JSON. */
function pageOf(job, start, maxResults, int64Timestamp) {
  const r = job.result;
  const rows = [];
  let bytes = 0;
  let i = start;
  const limit = maxResults ?? Infinity;
  while (i < r.total && rows.length < limit && bytes < MAX_PAGE_BYTES) {
    const values = rowAt(r, i);
    const row = { f: values.map((v, c) => ({ v: encodeValue(r.types[c], v, { int64Timestamp }) })) };
    bytes += JSON.stringify(row).length;
    rows.push(row);
    i++;
  }
  const out = { totalRows: String(r.total) };
  if (rows.length) out.rows = rows;
  if (i < r.total) out.pageToken = encodePageToken(job.id, i);
  return out;
}

function rowAt(r, index) {
  if (r.cache.index < 0 || index < r.offsets[r.cache.index] || index >= r.offsets[r.cache.index] + r.cache.rows.length) {
    let lo = 0;
    let hi = r.offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (r.offsets[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    r.cache = { index: lo, rows: r.result.getChunk(lo).getRows() };
  }
  return r.cache.rows[index - r.offsets[r.cache.index]];
}

function encodePageToken(jobId, index) {
  return Buffer.from(JSON.stringify({ j: jobId, i: index })).toString('base64url');
}

function decodePageToken(token, jobId) {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (t.j === jobId && Number.isInteger(t.i) && t.i >= 0) return t.i;
  } catch {
    // fall through
  }
  throw new BqError(400, 'invalid', 'Invalid page token');
}

function etag() {
  return randomBytes(16).toString('base64');
}

/** Waits for `promise` or `ms`, whichever comes first, leaving no timer behind to hold the process open. */
function within(promise, ms) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What the journal keeps of an answer: the facts tests check, never the rows. */
function answerSummary(out) {
  const job = out.job ?? out;
  const q = job.statistics?.query;
  const summary = {
    jobId: job.jobReference?.jobId ?? null,
    queryId: out.queryId ?? null,
    jobComplete: out.jobComplete ?? null,
    state: job.status?.state ?? null,
    errorReason: job.status?.errorResult?.reason ?? null,
    totalBytesBilled: out.totalBytesBilled ?? q?.totalBytesBilled ?? null,
    cacheHit: out.cacheHit ?? q?.cacheHit ?? null,
  };
  if (q) summary.referencedTables = q.referencedTables ?? null;
  return summary;
}

// ---------------------------------------------------------------------------------------------------------
// Control endpoints (no auth; the server only listens on loopback)

/** Recent BigQuery API calls, for tests asserting what the client sent (tokens are never kept). */
export class RequestJournal {
  constructor(max = 500) {
    this.max = max;
    this.entries = [];
  }

  record({ method, path, op, query, body, auth }) {
    const entry = {
      at: new Date().toISOString(),
      method,
      path,
      op,
      query,
      body,
      auth: auth.ok ? { ok: true, iss: auth.claims.iss } : { ok: false, why: auth.why },
      status: null,
      /** @type {Record<string, unknown> | null} a summary of a 200 answer (answerSummary), or the error reason */
      answer: null,
    };
    this.entries.push(entry);
    if (this.entries.length > this.max) this.entries.shift();
    return entry;
  }

  /** @param {{ op?: string, sql?: string, requestId?: string, label?: string }} filter */
  list(filter = {}) {
    return this.entries.filter((e) => {
      if (filter.op && e.op !== filter.op) return false;
      const sql = e.body?.query ?? e.body?.configuration?.query?.query ?? '';
      if (filter.sql && !String(sql).includes(filter.sql)) return false;
      if (filter.requestId && e.body?.requestId !== filter.requestId) return false;
      if (filter.label) {
        const [k, v] = filter.label.split(':');
        const labels = e.body?.labels ?? e.body?.configuration?.labels ?? {};
        if (labels[k] !== v) return false;
      }
      return true;
    });
  }

  clear() {
    this.entries = [];
  }
}

async function control(ctx, req, res, url) {
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (path === '/__health') return send(res, 200, { ok: true, datasets: ctx.engine.datasets(), today: ctx.engine.today });
  if (path === '/__faults' && method === 'GET') return send(res, 200, { faults: ctx.faults.list(), kinds: FAULT_KINDS });
  if (path === '/__faults' && method === 'POST') {
    const raw = await readBody(req);
    try {
      const spec = JSON.parse(raw ?? '');
      const specs = Array.isArray(spec) ? spec : [spec];
      const armed = specs.map((s) => ctx.faults.arm(s));
      return send(res, 201, Array.isArray(spec) ? { faults: armed } : armed[0]);
    } catch (e) {
      return send(res, 400, { error: e instanceof FaultSpecError ? e.message : 'body must be a JSON fault spec' });
    }
  }
  if (path === '/__faults' && method === 'DELETE') {
    ctx.faults.clear();
    res.writeHead(204).end();
    return undefined;
  }
  const one = /^\/__faults\/([^/]+)$/.exec(path);
  if (one && method === 'DELETE') {
    const n = ctx.faults.clear(decodeURIComponent(one[1]));
    if (n === 0) return send(res, 404, { error: 'no such fault' });
    res.writeHead(204).end();
    return undefined;
  }
  if (path === '/__requests' && method === 'GET') {
    const p = url.searchParams;
    const list = ctx.journal.list({
      op: p.get('op') ?? undefined,
      sql: p.get('sql') ?? undefined,
      requestId: p.get('requestId') ?? undefined,
      label: p.get('label') ?? undefined,
    });
    const limit = Number(p.get('limit') ?? 100);
    return send(res, 200, { requests: list.slice(-Math.max(1, Math.min(500, limit))) });
  }
  if (path === '/__requests' && method === 'DELETE') {
    ctx.journal.clear();
    res.writeHead(204).end();
    return undefined;
  }
  return send(res, 404, { error: `no control endpoint ${method} ${path}` });
}
