import { catalogSnapshot, hasDataset } from '../../catalog/snapshot';
import { ApiError } from '../../errors';
import { TtlCache } from '../../lib/ttl-cache';
import type { OpContext } from '../../context';
import { memoriesForTable } from '../memories/memories';
import { resolveBrand } from '../../auth/scope';
import { CONTRACT_PROJECT } from '../../sql/guard';
import { createWarehouseClient, type TableFieldSchema, type TableInfo } from '../../warehouse/bigquery-client';
import type { TableDescription, TableList, TableSummary } from './tables.schemas';
import type { Coverage } from '../../schemas/catalog';
import { describeError } from '../../errors';

/**
 * describeTable and listTables: what a table is, from BigQuery's table metadata (`tables.get`, `tables.list`)
 * rather than a query, so knowing a table spends no run, bills nothing and writes no query_log row. The memories
 * that apply come from D1. Metadata is reused for TABLE_METADATA_TTL_MS per isolate (row counts and coverage move
 * daily; a few minutes late is fine for discovery).
 */

/** How long a table's metadata is reused before BigQuery is asked again. */
export const TABLE_METADATA_TTL_MS = 5 * 60_000;
/** Memories one description carries at most (the rest: `memoriesTruncated`, and list_memories). */
export const TABLE_MEMORIES_MAX = 50;
/** Tables of one dataset described in a listing at most (one tables.get each). */
export const TABLE_LIST_MAX = 200;

const tableInfos = new TtlCache<Promise<TableInfo>>(512);
const tableLists = new TtlCache<Promise<TableList['tables']>>(128);
const coverages = new TtlCache<Promise<Coverage | null>>(512);

/** How long list_brands waits for one dataset's `tables.list` before it says the coverage is unknown. */
export const COVERAGE_TIMEOUT_MS = 5_000;

/** Labels carry the loader's facts: `layer`, and `data_first_day` / `data_last_day` (YYYY-MM-DD). */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

function coverageOf(labels: Record<string, string>): Coverage | null {
  const first = labels.data_first_day;
  const last = labels.data_last_day;
  return first !== undefined && last !== undefined && DAY.test(first) && DAY.test(last) ? { firstDay: first, lastDay: last } : null;
}

function columnsOf(fields: TableFieldSchema[]): TableDescription['columns'] {
  return fields.map((f) => ({
    name: f.name,
    type: f.type,
    ...(f.mode && f.mode !== 'NULLABLE' ? { mode: f.mode } : {}),
    description: f.description ?? null,
    ...(f.fields ? { fields: columnsOf(f.fields) } : {}),
  }));
}

/** The brand's dataset, or the refusal (403 for a brand out of reach, 409 for one without a dataset). */
async function brandDataset(ctx: OpContext, brandId: string | undefined): Promise<{ brandId: string; dataset: string }> {
  const id = resolveBrand(ctx.principal, brandId, { required: true, transport: ctx.transport });
  const brand = (await catalogSnapshot(ctx.env, ctx.now)).brands.get(id);
  if (!brand) throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(id)}`);
  if (!hasDataset(brand)) throw new ApiError('BRAND_NOT_PROVISIONED', `brand ${id} has no provisioned dataset yet; it has no tables`);
  return { brandId: id, dataset: brand.dataset };
}

/** The metadata of `key`, loaded once per TABLE_METADATA_TTL_MS (a failure is not kept: the next call asks again). */
function cached<V>(ctx: OpContext, cache: TtlCache<Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
  return cache.bound({ maxBytes: ctx.config.CACHE_MAX_BYTES }).load(key, ctx.now, TABLE_METADATA_TTL_MS, load);
}

function tableInfo(ctx: OpContext, brandId: string, dataset: string, table: string): Promise<TableInfo> {
  return cached(ctx, tableInfos, `${dataset}.${table}`, async () => {
    const client = createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil });
    try {
      return await client.getTable({ brandId, dataset, table, requestId: ctx.requestId, labels: {} });
    } catch (err) {
      // tables.get answers 404 for a table the dataset does not have; say so in the table's words.
      if (err instanceof ApiError && (err.code === 'QUERY_FAILED' || err.code === 'FORBIDDEN_TABLE') && isNotFound(err)) {
        throw new ApiError(
          'NOT_FOUND',
          `table ${table} does not exist in brand ${brandId}'s dataset; describe_table without a table lists them`,
          {
            details: { table },
          },
        );
      }
      throw err;
    }
  });
}

function isNotFound(err: ApiError): boolean {
  const d = err.details;
  return typeof d === 'object' && d !== null && 'reason' in d && d.reason === 'notFound';
}

/** What a listing and a description both say of a table. */
function summary(brandId: string, dataset: string, table: string, info: TableInfo): TableSummary {
  return {
    brandId,
    table,
    sqlName: `\`${CONTRACT_PROJECT}.${dataset}.${table}\``,
    description: info.description,
    layer: info.labels.layer ?? null,
    rowCount: info.numRows,
    coverage: coverageOf(info.labels),
  };
}

/** describeTable: one table's columns, description, layer, row count, coverage and the memories that apply. */
export async function describeTable(ctx: OpContext, input: { brandId?: string; table: string }): Promise<TableDescription> {
  const { brandId, dataset } = await brandDataset(ctx, input.brandId);
  const [info, { memories, more }] = await Promise.all([
    tableInfo(ctx, brandId, dataset, input.table),
    memoriesForTable(ctx, brandId, input.table, TABLE_MEMORIES_MAX),
  ]);
  return {
    ...summary(brandId, dataset, input.table, info),
    type: info.type,
    columns: columnsOf(info.schema),
    memories,
    memoriesTruncated: more,
  };
}

/** listTables: every table of the brand's dataset with its description, layer, row count and coverage. */
export async function listTables(ctx: OpContext, input: { brandId?: string }): Promise<TableList> {
  const { brandId, dataset } = await brandDataset(ctx, input.brandId);
  const tables = await cached(ctx, tableLists, dataset, async () => {
    const client = createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil });
    const listed = await client.listTables({ brandId, dataset, requestId: ctx.requestId, labels: {} });
    if (listed.length > TABLE_LIST_MAX) {
      throw new ApiError(
        'WAREHOUSE_ERROR',
        `brand ${brandId}'s dataset has ${listed.length} tables; at most ${TABLE_LIST_MAX} can be listed with descriptions`,
        {
          reason: 'too_many_tables',
        },
      );
    }
    const infos = await Promise.all(listed.map((t) => tableInfo(ctx, brandId, dataset, t.table)));
    return listed.map((t, i) => summary(brandId, dataset, t.table, infos[i]!));
  });
  return { brandId, dataset, tables };
}

/**
 * Every table of the brand with its columns (no memories): what `search` indexes. The same tables.list / tables.get
 * metadata and per-isolate caches as listTables and describeTable, so it spends no run either.
 */
export async function listTableColumns(
  ctx: OpContext,
  input: { brandId?: string },
): Promise<{ brandId: string; dataset: string; tables: (TableSummary & { columns: TableDescription['columns'] })[] }> {
  const { brandId, dataset, tables } = await listTables(ctx, input);
  const infos = await Promise.all(tables.map((t) => tableInfo(ctx, brandId, dataset, t.table)));
  return { brandId, dataset, tables: tables.map((t, i) => ({ ...t, columns: columnsOf(infos[i]!.schema) })) };
}

/**
 * datasetCoverage: the first and last day with data over all of a dataset's tables, for list_brands. One
 * `tables.list` (which carries each table's labels), no `tables.get` and no query; reused for
 * TABLE_METADATA_TTL_MS per isolate. null when no table has coverage labels, or when the warehouse cannot be asked
 * (then a warning with the request id: the brands list still answers).
 */
export async function datasetCoverage(ctx: OpContext, brandId: string, dataset: string): Promise<Coverage | null> {
  try {
    return await cached(ctx, coverages, dataset, async () => {
      const client = createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil });
      const listed = await client.listTables({ brandId, dataset, requestId: ctx.requestId, labels: {}, timeoutMs: COVERAGE_TIMEOUT_MS });
      const covered = listed.flatMap((t) => coverageOf(t.labels) ?? []);
      if (covered.length === 0) return null;
      return {
        firstDay: covered.map((c) => c.firstDay).sort()[0]!,
        lastDay: covered
          .map((c) => c.lastDay)
          .sort()
          .at(-1)!,
      };
    });
  } catch (err) {
    ctx.log.warn('list_brands: data coverage unavailable', { brandId, internal: describeError(err) });
    return null;
  }
}
