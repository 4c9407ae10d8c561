import { configOf, type Env } from '../env';
import type { DatasetOptions, DryRunOptions, DryRunResult, TableInfo, TableListEntry, TableOptions } from './types';
import { malformedAnswer } from './errors';
import { sanitizeLabels } from './labels';
import type { Transport } from './transport';
import { DryRunQueryStatisticsSchema, JobSchema, TableListSchema, TableResourceSchema } from './wire';

/** The client's calls that run nothing: the dry run (jobs.insert, dryRun) and table metadata (tables.get, tables.list). */

/** Pages of `tables.list` read at most (1,000 tables each). */
const MAX_TABLE_LIST_PAGES = 10;

/** Validates `sql` and estimates bytes with a `jobs.insert` dry run (nothing runs, nothing is billed). */
export async function dryRun(env: Env, http: Transport, sql: string, opts: DryRunOptions): Promise<DryRunResult> {
  const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
  const call = http.newCall(opts, 'jobs.insert(dryRun)', timeoutMs, { maxBytesBilled: opts.maxBytesBilled });
  const json = await http.send(
    {
      method: 'POST',
      path: '/jobs',
      body: {
        jobReference: { projectId: env.BIGQUERY_PROJECT, location: http.location },
        configuration: {
          dryRun: true,
          labels: sanitizeLabels(opts.labels),
          query: {
            query: sql,
            useLegacySql: false,
            // A dry run answered from the cache may omit referencedTables ("only populated for query jobs that
            // are not cache hits"), which would empty the gate's table check; Google's own dry-run sample
            // sets use_query_cache=False too.
            useQueryCache: false,
            ...(opts.maxBytesBilled === undefined ? {} : { maximumBytesBilled: String(opts.maxBytesBilled) }),
          },
        },
      },
    },
    call,
  );
  const job = JobSchema.safeParse(json);
  const q = job.success ? job.data.statistics?.query : undefined;
  if (!job.success || !q?.statementType) {
    throw malformedAnswer('jobs.insert(dryRun): no statistics.query.statementType', JSON.stringify(json));
  }
  return {
    statementType: q.statementType,
    referencedTables: q.referencedTables ?? [],
    referencedRoutines: q.referencedRoutines ?? [],
    otherReferences: otherReferences(json),
    cacheHit: q.cacheHit === true,
    totalBytesProcessed: q.totalBytesProcessed ?? job.data.statistics?.totalBytesProcessed ?? 0,
  };
}

export async function getTable(env: Env, http: Transport, opts: TableOptions): Promise<TableInfo> {
  const timeoutMs = opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS;
  const call = http.newCall(opts, 'tables.get', timeoutMs);
  const path = `/datasets/${encodeURIComponent(opts.dataset)}/tables/${encodeURIComponent(opts.table)}`;
  const json = await http.send({ method: 'GET', path }, call);
  const parsed = TableResourceSchema.safeParse(json);
  if (!parsed.success)
    throw malformedAnswer(`tables.get: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
  const t = parsed.data;
  return {
    schema: t.schema?.fields ?? [],
    description: t.description ?? null,
    numRows: t.numRows ?? null,
    numBytes: t.numBytes ?? null,
    labels: t.labels ?? {},
    type: t.type ?? null,
    lastModifiedTime: t.lastModifiedTime ?? null,
  };
}

export async function listTables(env: Env, http: Transport, opts: DatasetOptions): Promise<TableListEntry[]> {
  const call = http.newCall(opts, 'tables.list', opts.timeoutMs ?? configOf(env).QUERY_TIMEOUT_MS);
  const path = `/datasets/${encodeURIComponent(opts.dataset)}/tables`;
  const out: TableListEntry[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_TABLE_LIST_PAGES; page++) {
    const json = await http.send({ method: 'GET', path, query: { maxResults: 1000, pageToken } }, call);
    const parsed = TableListSchema.safeParse(json);
    if (!parsed.success)
      throw malformedAnswer(`tables.list: ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}`, JSON.stringify(json));
    for (const t of parsed.data.tables) out.push({ table: t.tableReference.tableId, type: t.type ?? null, labels: t.labels ?? {} });
    pageToken = parsed.data.nextPageToken;
    if (pageToken === undefined) return out;
  }
  call.log.warn('tables.list: more pages than read', { dataset: opts.dataset, tables: out.length });
  return out;
}

/** The `referenced*` entries of a dry run's `statistics.query` other than tables and routines, unparsed. */
function otherReferences(json: unknown): Record<string, unknown> {
  const parsed = DryRunQueryStatisticsSchema.safeParse(json);
  if (!parsed.success) return {};
  return Object.fromEntries(
    Object.entries(parsed.data.statistics.query).filter(
      ([key]) => key.startsWith('referenced') && key !== 'referencedTables' && key !== 'referencedRoutines',
    ),
  );
}
