import { ApiError } from '../../errors';
import type { OpContext } from '../../context';
import { memoriesForTable } from '../memories/memories';
import { isFamilyName, type TableDescription } from './tables.schemas';
import { brandDataset, columnsOf, familySummary, listedTables, tableInfo, type Listed } from './table-metadata';

/** Memories one description carries at most (the rest: `memoriesTruncated`, and list_memories). */
export const TABLE_MEMORIES_MAX = 50;

/**
 * describeTable: one table's columns, description, layer, row count, coverage and the memories that apply. A shard
 * family (`events_*`) is described by its latest shard's metadata, with the family's shards and coverage.
 */
export async function describeTable(ctx: OpContext, input: { brandId?: string; table: string }): Promise<TableDescription> {
  const brand = await brandDataset(ctx, input.brandId);
  const { brandId, dataset } = brand;
  let entry: Listed = { table: input.table, latest: input.table, coverage: null };
  if (isFamilyName(input.table)) {
    const found = (await listedTables(ctx, brandId, dataset)).find((t) => t.table === input.table);
    if (!found) {
      throw new ApiError(
        'NOT_FOUND',
        `brand ${brandId}'s dataset has no family of date shards ${input.table}; describe_table without a table lists them`,
        { details: { table: input.table } },
      );
    }
    entry = found;
  }
  const [info, { memories, more }] = await Promise.all([
    tableInfo(ctx, brandId, dataset, entry.latest),
    memoriesForTable(ctx, brandId, input.table, TABLE_MEMORIES_MAX),
  ]);
  return {
    ...familySummary(brand, entry, info),
    type: info.type,
    columns: columnsOf(info.schema),
    memories,
    memoriesTruncated: more,
  };
}
