import type { Env } from '../env';
import { dryRun, getTable, listTables } from './metadata';
import { awaitJob, cancelJob, jobStatus, queryJobs, readPage, executeQuery, submitJob } from './query-job';
import { createTransport } from './transport';
import type { WarehouseClient, WarehouseClientDeps } from './types';

/**
 * The one BigQuery client: REST v2 over `fetch`, service-account JWTs signed with WebCrypto. It uses nothing
 * Worker-specific, so Node (the benchmark) can run it unchanged. See docs/warehouse-client.md.
 */

export type * from './types';
export { JobStillRunning } from './query-job';

/**
 * The client: the HTTP layer (`transport.ts`), query jobs (`query-job.ts`: run, wait, page, cursor pages, cancel
 * and settle) and the calls that run nothing (`metadata.ts`: dry run, tables.get, tables.list).
 */
export function createWarehouseClient(env: Env, deps: WarehouseClientDeps = {}): WarehouseClient {
  const transport = createTransport(env, deps);
  const jobs = queryJobs(env, transport, deps);
  return {
    dryRun: (sql, opts) => dryRun(env, transport, sql, opts),
    query: (sql, opts) => executeQuery(jobs, sql, opts),
    submitJob: (sql, opts) => submitJob(jobs, sql, opts),
    awaitJob: (job, opts) => awaitJob(jobs, job, opts),
    jobStatus: (job, opts) => jobStatus(jobs, job, opts),
    cancelJob: (job, opts) => cancelJob(jobs, job, opts),
    readPage: (opts) => readPage(jobs, opts),
    getTable: (opts) => getTable(env, transport, opts),
    listTables: (opts) => listTables(env, transport, opts),
  };
}
