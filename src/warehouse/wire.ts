import { z } from 'zod';

/**
 * The slice of BigQuery's REST (v2) response shapes the client reads, parsed with zod so nothing upstream is
 * trusted by cast. Objects are non-strict: BigQuery adds fields over time and we ignore what we don't use.
 * Rows are left as `unknown` here: `decode.ts` checks each cell against the schema while converting it, which
 * is one pass instead of two over up to ROW_CAP rows.
 */

/** BigQuery sends int64 counters as decimal strings ("12345"); JSON numbers are accepted too. */
const Int64Count = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((v) => Number(v));

/** A column of a result schema (BigQuery `TableFieldSchema`), with nested `fields` for RECORD/STRUCT. */
export interface FieldSchema {
  name: string;
  /** BigQuery's type name as sent (e.g. INTEGER or INT64, FLOAT or FLOAT64, RECORD or STRUCT). */
  type: string;
  /** NULLABLE, REQUIRED or REPEATED; absent means NULLABLE. */
  mode?: string;
  fields?: FieldSchema[];
  /** For RANGE: the type of its start and end (DATE, DATETIME or TIMESTAMP). */
  rangeElementType?: { type: string };
  /**
   * TIMESTAMP (or RANGE<TIMESTAMP>) digits of second fractions, as BigQuery's TableFieldSchema sends it (an int64
   * string): 12 for a picosecond `TIMESTAMP(12)` column, absent or 6 for microseconds. Kept so a caller can see that
   * the column is finer than the microseconds its values carry (docs/warehouse-client.md, result values).
   */
  timestampPrecision?: number;
}

export const FieldSchemaSchema: z.ZodType<FieldSchema> = z.lazy(() =>
  z.object({
    name: z.string(),
    type: z.string().min(1),
    mode: z.string().optional(),
    fields: z.array(FieldSchemaSchema).optional(),
    rangeElementType: z.object({ type: z.string().min(1) }).optional(),
    timestampPrecision: Int64Count.optional(),
  }),
);

export const TableSchemaSchema = z.object({ fields: z.array(FieldSchemaSchema).default([]) });

const JobReferenceSchema = z.object({
  projectId: z.string().optional(),
  jobId: z.string().min(1),
  location: z.string().optional(),
});

/** `jobs.query` and `jobs.getQueryResults` answers (the latter lacks `totalBytesBilled`). */
export const QueryResponseSchema = z.object({
  jobComplete: z.boolean().default(false),
  jobReference: JobReferenceSchema.optional(),
  /** Under JOB_CREATION_OPTIONAL, the id of a query that ran without a job (then `jobReference` is absent). */
  queryId: z.string().optional(),
  cacheHit: z.boolean().optional(),
  schema: TableSchemaSchema.optional(),
  rows: z.array(z.unknown()).optional(),
  totalRows: Int64Count.optional(),
  pageToken: z.string().min(1).optional(),
  totalBytesProcessed: Int64Count.optional(),
  totalBytesBilled: Int64Count.optional(),
});
export type QueryResponse = z.infer<typeof QueryResponseSchema>;

/**
 * The `Job` resource answered by `jobs.insert` (dry run) and `jobs.get`. `statistics.query` is loose: every
 * `referenced*` list BigQuery adds over time (models, property graphs, ...) stays visible, so the dry-run gate
 * can refuse kinds it does not know instead of never seeing them.
 */
export const JobSchema = z.object({
  jobReference: JobReferenceSchema.partial().optional(),
  status: z
    .object({
      state: z.string().optional(),
      errorResult: z.object({ reason: z.string().optional(), message: z.string().optional() }).optional(),
    })
    .optional(),
  statistics: z
    .object({
      totalBytesProcessed: Int64Count.optional(),
      query: z
        .looseObject({
          statementType: z.string().optional(),
          cacheHit: z.boolean().optional(),
          totalBytesProcessed: Int64Count.optional(),
          totalBytesBilled: Int64Count.optional(),
          referencedTables: z.array(z.object({ projectId: z.string(), datasetId: z.string(), tableId: z.string() })).optional(),
          referencedRoutines: z.array(z.object({ projectId: z.string(), datasetId: z.string(), routineId: z.string() })).optional(),
        })
        .optional(),
    })
    .optional(),
});
/**
 * A dry run's `statistics.query` as a plain record, every key kept: the dry-run gate must see each `referenced*`
 * list BigQuery sends (models, property graphs, ...), including kinds this code was written before.
 */
export const DryRunQueryStatisticsSchema = z.object({
  statistics: z.object({ query: z.record(z.string(), z.unknown()) }),
});

/** Google's error envelope: `{ error: { code, message, status, errors: [{ reason, message, location }] } }`. */
export const GoogleErrorSchema = z.object({
  error: z.object({
    code: z.number().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
    errors: z
      .array(
        z.object({
          reason: z.string().optional(),
          message: z.string().optional(),
          location: z.string().optional(),
          domain: z.string().optional(),
        }),
      )
      .optional(),
  }),
});

/** A column as `tables.get` describes it: a result field plus its description. */
export interface TableFieldSchema extends FieldSchema {
  description?: string;
  fields?: TableFieldSchema[];
}

const TableFieldSchemaSchema: z.ZodType<TableFieldSchema> = z.lazy(() =>
  z.object({
    name: z.string(),
    type: z.string().min(1),
    mode: z.string().optional(),
    description: z.string().optional(),
    fields: z.array(TableFieldSchemaSchema).optional(),
  }),
);

/**
 * The slice of BigQuery's Table resource (tables.get) the service reads:
 * https://cloud.google.com/bigquery/docs/reference/rest/v2/tables#Table. `numRows`, `numBytes` and the times are
 * int64 sent as decimal strings; views and external tables have no `numRows`.
 */
export const TableResourceSchema = z.object({
  description: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  schema: z.object({ fields: z.array(TableFieldSchemaSchema).default([]) }).optional(),
  numRows: Int64Count.optional(),
  numBytes: Int64Count.optional(),
  type: z.string().optional(),
  lastModifiedTime: Int64Count.optional(),
});

/** tables.list (https://cloud.google.com/bigquery/docs/reference/rest/v2/tables/list): one page of a dataset's tables. */
export const TableListSchema = z.object({
  tables: z
    .array(
      z.object({
        tableReference: z.object({ tableId: z.string().min(1) }),
        type: z.string().optional(),
        labels: z.record(z.string(), z.string()).optional(),
      }),
    )
    .default([]),
  nextPageToken: z.string().optional(),
});
