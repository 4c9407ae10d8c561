import { z } from 'zod';

// What the views read from tool results. A reader's schema, not the server's: it names only the fields a view
// shows and lets the rest through (z.object, not strict), so a server that adds fields never breaks a view, and
// a field of the wrong type is refused with a message instead of drawing nonsense.

export const FieldSchema = z.object({ name: z.string(), type: z.string(), mode: z.string().optional() });
export type Field = z.infer<typeof FieldSchema>;

export const Row = z.record(z.string(), z.unknown());
export type Row = z.infer<typeof Row>;

export const WindowSchema = z.object({
  startDate: z.string(),
  endDate: z.string(),
  cadence: z.string().optional(),
  timezone: z.string().optional(),
});
export type ResultWindow = z.infer<typeof WindowSchema>;

/** run_query's result (and a page read through its cursor), rows expanded back to objects by resultData. */
export const RunResultSchema = z.object({
  brandId: z.string().optional(),
  rows: z.array(Row),
  rowCount: z.number().int(),
  truncated: z.boolean(),
  schema: z.array(FieldSchema).optional(),
  totalRows: z.number().int().optional(),
  nextCursor: z.string().nullable().optional(),
  window: WindowSchema.optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;

// chartSpec and dashboardConfig: the catalog's own schemas, so the view draws exactly what the catalog validator
// accepts (docs/schemas/chart-spec.schema.json, dashboard-config.schema.json). A stored value that fails them
// (written before validation existed) is not drawn: a chart falls back to the inferred one, a dashboard to one
// tile per section.
export { ChartSpecSchema, DashboardConfigSchema, TileSchema } from '../../src/features/catalog-files/shapes';
export type { ChartSpec, DashboardConfig, Tile } from '../../src/features/catalog-files/shapes';

export const ReportSectionSchema = z.object({
  id: z.string(),
  name: z.string().nullish(),
  description: z.string().nullish(),
  chartSpec: z.unknown().optional(),
  rows: z.array(Row).optional(),
  schema: z.array(FieldSchema).optional(),
  rowCount: z.number().int().optional(),
  totalRows: z.number().int().optional(),
  truncated: z.boolean().optional(),
  /** A section that failed to run: its error body's code and message, shown in its tile. */
  error: z.object({ code: z.string(), message: z.string(), requestId: z.string().optional() }).optional(),
});
export type ReportSection = z.infer<typeof ReportSectionSchema>;

/** show_report's result (text JSON plus the layout from _meta, merged by resultData): the report, the window its sections ran with, and each section's rows. */
export const ReportResultSchema = z.object({
  brandId: z.string().optional(),
  report: z.object({
    reportId: z.string(),
    name: z.string(),
    description: z.string().nullish(),
    instructions: z.string().nullish(),
    dashboardConfig: z.unknown().optional(),
  }),
  window: WindowSchema.optional(),
  sections: z.array(ReportSectionSchema),
});
export type ReportResult = z.infer<typeof ReportResultSchema>;

/** The error body a failed tool result carries as text: `{ error: { code, message, requestId } }`. */
export const ErrorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), requestId: z.string().optional() }),
});
