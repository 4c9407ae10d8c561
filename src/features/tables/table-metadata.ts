import { catalogSnapshot, hasDataset } from '../../catalog/snapshot';
import { ApiError } from '../../errors';
import { TtlCache } from '../../lib/ttl-cache';
import type { OpContext } from '../../context';
import { resolveBrand } from '../../auth/scope';
import { CONTRACT_PROJECT } from '../../sql/guard';
import { createWarehouseClient, type TableFieldSchema, type TableInfo } from '../../warehouse/bigquery-client';
import type { TableDescription, TableSummary } from './tables.schemas';
import type { TableListEntry } from '../../warehouse/bigquery-client';
import type { Coverage } from '../../schemas/catalog';
import { localEpochDay } from '../query/period';
import { completeness } from './coverage';

/**
 * The table metadata describeTable (describe-table.ts) and the listings (list-tables.ts) read: BigQuery's
 * `tables.get` and `tables.list` rather than a query, so knowing a table spends no run, bills nothing and writes no
 * query_log row. Metadata is reused for TABLE_METADATA_TTL_MS per isolate (row counts and coverage move daily; a few
 * minutes late is fine for discovery).
 */

/** How long a table's metadata is reused before BigQuery is asked again. */
export const TABLE_METADATA_TTL_MS = 5 * 60_000;
/** Tables of one dataset described in a listing at most (one tables.get each). */
export const TABLE_LIST_MAX = 200;

const tableInfos = new TtlCache<Promise<TableInfo>>(512);
const tableEntries = new TtlCache<Promise<Listed[]>>(128);

/** Labels carry the loader's facts: `layer`, and `data_first_day` / `data_last_day` (YYYY-MM-DD). */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function coverageOf(labels: Record<string, string>): Coverage | null {
  const first = labels.data_first_day;
  const last = labels.data_last_day;
  return first !== undefined && last !== undefined && DAY.test(first) && DAY.test(last) ? { firstDay: first, lastDay: last } : null;
}

export function columnsOf(fields: TableFieldSchema[]): TableDescription['columns'] {
  return fields.map((f) => ({
    name: f.name,
    type: f.type,
    ...(f.mode && f.mode !== 'NULLABLE' ? { mode: f.mode } : {}),
    description: f.description ?? null,
    ...(f.fields ? { fields: columnsOf(f.fields) } : {}),
  }));
}

/** A brand's tables as one request reads them: its id, dataset, and its today (for coverage completeness). */
export interface BrandTables {
  brandId: string;
  dataset: string;
  /** The brand's current day, days since epoch in its time zone (localEpochDay). */
  today: number;
}

/** The brand's dataset, or the refusal (403 for a brand out of reach, 409 for one without a dataset). */
export async function brandDataset(ctx: OpContext, brandId: string | undefined): Promise<BrandTables> {
  const id = resolveBrand(ctx.principal, brandId, { required: true, transport: ctx.transport });
  const brand = (await catalogSnapshot(ctx.env, ctx.now)).brands.get(id);
  if (!brand) throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(id)}`);
  if (!hasDataset(brand)) throw new ApiError('BRAND_NOT_PROVISIONED', `brand ${id} has no provisioned dataset yet; it has no tables`);
  return { brandId: id, dataset: brand.dataset, today: localEpochDay(ctx.now, brand.timezone) };
}

/** The metadata of `key`, loaded once per TABLE_METADATA_TTL_MS (a failure is not kept: the next call asks again). */
export function cached<V>(ctx: OpContext, cache: TtlCache<Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
  return cache.bound({ maxBytes: ctx.config.CACHE_MAX_BYTES }).load(key, ctx.now, TABLE_METADATA_TTL_MS, load);
}

export function tableInfo(ctx: OpContext, brandId: string, dataset: string, table: string): Promise<TableInfo> {
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

/**
 * A date shard's name: a prefix ending in `_` and a YYYYMMDD suffix, BigQuery's date-sharded tables
 * (https://cloud.google.com/bigquery/docs/partitioned-tables#dt_partition_shard), which its console lists once.
 */
const SHARD = /^([A-Za-z_][A-Za-z0-9_]*_)(\d{4}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01]))$/;

/** One entry of a brand's tables: a table, or a family of at least two date shards (`latest` is described). */
export interface Listed {
  table: string;
  /** The table whose metadata describes the entry: the table itself, or a family's latest shard. */
  latest: string;
  shards?: NonNullable<TableSummary['shards']>;
  coverage: Coverage | null;
}

/** The first and last day over several tables' coverage labels; null when none has them. */
export function spanOf(coverages: (Coverage | null)[]): Coverage | null {
  const covered = coverages.flatMap((c) => c ?? []);
  if (covered.length === 0) return null;
  return {
    firstDay: covered.map((c) => c.firstDay).sort()[0]!,
    lastDay: covered
      .map((c) => c.lastDay)
      .sort()
      .at(-1)!,
  };
}

/** tables.list's entries with each family of date shards (two or more with one prefix) folded into one, in order. */
function foldShards(listed: TableListEntry[]): Listed[] {
  const families = new Map<string, TableListEntry[]>();
  for (const t of listed) {
    const m = SHARD.exec(t.table);
    if (m) families.set(m[1]!, [...(families.get(m[1]!) ?? []), t]);
  }
  const out: Listed[] = [];
  const done = new Set<string>();
  for (const t of listed) {
    const prefix = SHARD.exec(t.table)?.[1];
    const family = prefix === undefined ? undefined : families.get(prefix);
    if (prefix === undefined || family === undefined || family.length < 2) {
      out.push({ table: t.table, latest: t.table, coverage: coverageOf(t.labels) });
      continue;
    }
    if (done.has(prefix)) continue;
    done.add(prefix);
    const suffixes = family.map((s) => s.table.slice(prefix.length)).sort();
    const last = suffixes.at(-1)!;
    out.push({
      table: `${prefix}*`,
      latest: `${prefix}${last}`,
      shards: { count: family.length, first: suffixes[0]!, last },
      coverage: spanOf(family.map((s) => coverageOf(s.labels))),
    });
  }
  return out;
}

/** A table's coverage with its completeness on the brand's today; null without coverage labels. */
function tableCoverage(coverage: Coverage | null, today: number): TableSummary['coverage'] {
  return coverage === null ? null : { ...coverage, ...completeness(coverage, today) };
}

/** What a listing and a description both say of a table. */
function summary(brand: BrandTables, table: string, info: TableInfo): TableSummary {
  return {
    brandId: brand.brandId,
    table,
    sqlName: `\`${CONTRACT_PROJECT}.${brand.dataset}.${table}\``,
    description: info.description,
    layer: info.labels.layer ?? null,
    rowCount: info.numRows,
    coverage: tableCoverage(coverageOf(info.labels), brand.today),
  };
}

/** A family's entry in the listing: the latest shard's facts, the family's name, shards and coverage, no row count. */
export function familySummary(brand: BrandTables, entry: Listed, info: TableInfo): TableSummary {
  const one = summary(brand, entry.table, info);
  return entry.shards ? { ...one, rowCount: null, coverage: tableCoverage(entry.coverage, brand.today), shards: entry.shards } : one;
}

/** The brand's tables as listed: tables.list folded into shard families (cached per dataset, like the rest). */
export function listedTables(ctx: OpContext, brandId: string, dataset: string): Promise<Listed[]> {
  return cached(ctx, tableEntries, dataset, async () => {
    const client = createWarehouseClient(ctx.env, { waitUntil: ctx.waitUntil });
    const listed = await client.listTables({ brandId, dataset, requestId: ctx.requestId, labels: {} });
    const folded = foldShards(listed);
    if (folded.length > TABLE_LIST_MAX) {
      throw new ApiError(
        'WAREHOUSE_ERROR',
        `brand ${brandId}'s dataset has ${folded.length} tables; at most ${TABLE_LIST_MAX} can be listed with descriptions`,
        {
          reason: 'too_many_tables',
        },
      );
    }
    return folded;
  });
}
