import { z } from 'zod';

/** The run result as REST sends it (RunQueryResponse), strict so a field nobody declared fails the test. */
export const RunResultSchema = z.strictObject({
  brandId: z.string(),
  rows: z.array(z.record(z.string(), z.unknown())),
  rowCount: z.number().int(),
  truncated: z.boolean(),
  totalRows: z.number().int(),
  nextCursor: z.string().nullable(),
  schema: z.array(z.object({ name: z.string(), type: z.string() }).passthrough()).optional(),
  stats: z.strictObject({ dryRun: z.boolean(), totalBytesBilled: z.number(), totalBytesProcessed: z.number() }).optional(),
  window: z
    .strictObject({
      startDate: z.string(),
      endDate: z.string(),
      cadence: z.enum(['DAILY', 'WEEKLY', 'MONTHLY']).optional(),
      timezone: z.string(),
    })
    .optional(),
});
