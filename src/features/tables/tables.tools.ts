import { z } from 'zod';
import { ANNOTATIONS, defineTool } from '../../mcp/define-tool';
import { BrandIdField } from '../../schemas/fields';
import { ModelMemorySchema, modelMemory } from '../memories/memories.schemas';
import type { OpContext } from '../../context';
import { describeTable } from './describe-table';
import { listTables } from './list-tables';
import { DescribedTableNameSchema, TableDescriptionSchema, TableListSchema, type TableList } from './tables.schemas';

/** What the model reads: the table, its columns, and its memories without author or timestamps. */
export const DescribeTableOutput = z.union([TableDescriptionSchema.extend({ memories: z.array(ModelMemorySchema) }), TableListSchema]);

/** One table as the model reads it (describe_table with `table`, and `fetch` of a table): memories made compact. */
export async function describeTableForModel(ctx: OpContext, input: { brandId?: string; table: string }) {
  const described = await describeTable(ctx, input);
  return { ...described, memories: described.memories.map(modelMemory) };
}

/**
 * The brand's tables as the model reads them: each table's coverage as its first and last day only. Completeness
 * (last complete day, partial month and week) is the same for most tables of a brand and would repeat on every
 * line; describing the one table a question reads gives it.
 */
async function listTablesForModel(ctx: OpContext, input: { brandId?: string }): Promise<TableList> {
  const list = await listTables(ctx, input);
  return {
    ...list,
    tables: list.tables.map((t) =>
      t.coverage === null ? t : { ...t, coverage: { firstDay: t.coverage.firstDay, lastDay: t.coverage.lastDay } },
    ),
  };
}

/**
 * describe_table: one call to know a table (columns with types and descriptions, description, layer, row count,
 * days covered, the memories that apply), or without `table` the brand's tables. Table metadata, not a query: no
 * run spent, nothing billed, no query log row. The same operations as GET /v1/data/brands/{brandId}/tables[/{table}].
 */
export const describeTableTool = defineTool({
  name: 'describe_table',
  title: 'Describe table',
  description: "A brand's tables (without table), or one table's columns with descriptions, rows, days covered and memories. No run spent.",
  input: {
    brandId: BrandIdField.optional().describe('From list_brands.'),
    table: DescribedTableNameSchema.optional().describe(
      'Unqualified table name, e.g. fact__orders; a shard family as listed, e.g. events_*.',
    ),
  },
  output: DescribeTableOutput,
  // Sent once, as compact JSON text (no structuredContent copy), like run_query.
  result: 'text',
  annotations: ANNOTATIONS.read,
  run: ({ brandId, table }, { ctx }) =>
    table === undefined ? listTablesForModel(ctx, { brandId }) : describeTableForModel(ctx, { brandId, table }),
});
