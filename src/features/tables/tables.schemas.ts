import { z } from '@hono/zod-openapi';
import { TABLE_NAME_RE } from '../../catalog/table-name';
import { TableNameSchema } from '../memories/fields';
import { MemorySchema } from '../memories/memories.schemas';
import { CoverageSchema } from '../../schemas/catalog';

/** Wire schemas of describeTable (docs/tables.md), an extension: GET /v1/data/brands/{brandId}/tables[/{table}]. */

/** A family of date shards as it is named in SQL and in the tables list: the shards' common prefix and `*`. */
const FAMILY_NAME_RE = new RegExp(`${TABLE_NAME_RE.source.slice(0, -1)}\\*$`);

/** Whether `name` names a shard family (`events_*`) rather than one table. */
export function isFamilyName(name: string): boolean {
  return FAMILY_NAME_RE.test(name);
}

/** A table describe_table can describe: a table name (`fact__orders`, `events_20261030`) or a shard family (`events_*`). */
export const DescribedTableNameSchema = z.union([
  TableNameSchema,
  z.string().max(129).regex(FAMILY_NAME_RE, { error: 'a shard family is its prefix and *, e.g. events_*' }),
]);

export const TableParamsSchema = z.object({
  brandId: z
    .string()
    .min(1)
    .max(128)
    .openapi({ param: { name: 'brandId', in: 'path' }, example: 'brand_acme' }),
  table: DescribedTableNameSchema.openapi({
    param: { name: 'table', in: 'path' },
    description: 'A table, or a family of date shards as `<prefix>*` (e.g. `events_*`): its latest shard is described.',
    example: 'fact__orders',
  }),
});

export const BrandParamsSchema = z.object({
  brandId: TableParamsSchema.shape.brandId,
});

export const ColumnSchema: z.ZodType<{ name: string; type: string; mode?: string; description: string | null; fields?: unknown[] }> = z
  .object({
    name: z.string(),
    type: z.string().openapi({ description: 'BigQuery REST type name (STRING, INTEGER, FLOAT, NUMERIC, DATE, TIMESTAMP, RECORD, ...).' }),
    mode: z.string().optional().openapi({ description: 'NULLABLE (when absent), REQUIRED or REPEATED.' }),
    description: z.string().nullable(),
    fields: z.array(z.any()).optional().openapi({ description: 'Sub-columns of a RECORD, in the same shape.' }),
  })
  .openapi('Column');

/**
 * A table's coverage with how complete its last period is (coverage.ts): the last complete day, and the month and
 * week the data ends inside of, so an answer over a partial period can say so.
 */
export const TableCoverageSchema = CoverageSchema.extend({
  lastCompleteDay: z
    .string()
    .nullable()
    .optional()
    .openapi({
      description:
        "The last day that is over (in the brand's time zone) and has data: `lastDay`, or yesterday when the data reaches " +
        'today; null when no day with data is over yet.',
      example: '2026-11-26',
    }),
  partialMonth: z
    .string()
    .nullable()
    .optional()
    .openapi({
      description:
        '`YYYY-MM` of the month the complete data ends inside of (its figures so far are not the whole month); null when ' +
        '`lastCompleteDay` is the last day of its month.',
      example: '2026-11',
    }),
  partialWeek: z
    .string()
    .nullable()
    .optional()
    .openapi({
      description:
        'The Monday (`YYYY-MM-DD`) of the ISO week, Monday to Sunday, the complete data ends inside of; null when ' +
        '`lastCompleteDay` is a Sunday.',
      example: '2026-11-23',
    }),
}).openapi('TableCoverage', {
  description:
    'Extension: the days a table holds data for (its `data_first_day` / `data_last_day` labels, read with tables.get / ' +
    'tables.list, never a query) and how complete its last period is. The three completeness fields are always present ' +
    "on REST; describe_table's listing of a brand's tables leaves them out to stay short (describe one table for them).",
});

const TableFacts = {
  brandId: z.string().openapi({ example: 'brand_acme' }),
  table: z.string().openapi({ description: 'Table name inside the dataset.', example: 'fact__orders' }),
  sqlName: z.string().openapi({ description: 'The name to write in SQL, with backticks.', example: '`service-v1.acme.fact__orders`' }),
  description: z.string().nullable(),
  layer: z
    .string()
    .nullable()
    .openapi({ description: "The table's `layer` label: raw, mart or meta; null when unlabelled.", example: 'mart' }),
  rowCount: z.number().int().nullable().openapi({ description: "BigQuery's numRows; null for views and external tables." }),
  coverage: TableCoverageSchema.nullable(),
  shards: z
    .object({
      count: z.number().int().openapi({ description: 'Shards in the family.', example: 60 }),
      first: z.string().openapi({ description: 'The first shard suffix, YYYYMMDD.', example: '20260901' }),
      last: z.string().openapi({ description: 'The last (latest) shard suffix, YYYYMMDD: the shard described.', example: '20261030' }),
    })
    .optional()
    .openapi({
      description:
        "Extension, date-sharded tables only (`<prefix>YYYYMMDD`, as BigQuery's console groups them): the family is listed once, " +
        'as `<prefix>*` (query it with `_TABLE_SUFFIX`), with its first and last suffix and shard count; its description, ' +
        "layer, type and columns are the latest shard's, rowCount is null (each shard has its own) and coverage spans every shard.",
    }),
};

export const TableSummarySchema = z.object(TableFacts).openapi('TableSummary');
export type TableSummary = z.infer<typeof TableSummarySchema>;

export const TableDescriptionSchema = z
  .object({
    ...TableFacts,
    type: z.string().nullable().openapi({ description: 'TABLE, VIEW, MATERIALIZED_VIEW, EXTERNAL or SNAPSHOT.', example: 'TABLE' }),
    columns: z.array(ColumnSchema),
    memories: z.array(MemorySchema).openapi({
      description: 'Memories that apply: about this table or general, system and organization ones included, each once.',
    }),
    memoriesTruncated: z
      .boolean()
      .openapi({ description: 'True when more memories apply than the listed ones; list them with GET /v1/data/memories.' }),
  })
  .openapi('TableDescription', { description: "A table's metadata, read with BigQuery's tables.get (no query runs), and its memories." });
export type TableDescription = z.infer<typeof TableDescriptionSchema>;

export const TableListSchema = z
  .object({ brandId: z.string(), dataset: z.string(), tables: z.array(TableSummarySchema) })
  .openapi('TableList', { description: "A brand's tables, read with BigQuery's tables.list and tables.get (no query runs)." });
export type TableList = z.infer<typeof TableListSchema>;
