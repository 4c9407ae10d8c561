import type { OpContext } from '../../context';
import { describeError } from '../../errors';
import { TtlCache } from '../../lib/ttl-cache';
import type { Coverage } from '../../schemas/catalog';
import { createWarehouseClient } from '../../warehouse/bigquery-client';
import type { TableDescription, TableList, TableSummary } from './tables.schemas';
import { brandDataset, cached, columnsOf, coverageOf, familySummary, listedTables, spanOf, tableInfo } from './table-metadata';

/**
 * The listings of a brand's tables, from the same cached table metadata as describeTable: the table list
 * (describe_table without a table, GET /v1/data/brands/{brandId}/tables), the tables with their columns that
 * `search` indexes, and a dataset's coverage for list_brands.
 */

const coverages = new TtlCache<Promise<Coverage | null>>(512);

/** How long list_brands waits for one dataset's `tables.list` before it says the coverage is unknown. */
export const COVERAGE_TIMEOUT_MS = 5_000;

/** listTables: every table of the brand's dataset with its description, layer, row count and coverage. */
export async function listTables(ctx: OpContext, input: { brandId?: string }): Promise<TableList> {
  const brand = await brandDataset(ctx, input.brandId);
  const { brandId, dataset } = brand;
  const listed = await listedTables(ctx, brandId, dataset);
  const infos = await Promise.all(listed.map((t) => tableInfo(ctx, brandId, dataset, t.latest)));
  return { brandId, dataset, tables: listed.map((t, i) => familySummary(brand, t, infos[i]!)) };
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
  // A family's columns are its latest shard's (the one its summary describes).
  const infos = await Promise.all(
    tables.map((t) => tableInfo(ctx, brandId, dataset, t.shards ? `${t.table.slice(0, -1)}${t.shards.last}` : t.table)),
  );
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
      return spanOf(listed.map((t) => coverageOf(t.labels)));
    });
  } catch (err) {
    ctx.log.warn('list_brands: data coverage unavailable', { brandId, internal: describeError(err) });
    return null;
  }
}
