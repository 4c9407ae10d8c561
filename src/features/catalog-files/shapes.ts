import { z } from 'zod';

/**
 * The shapes of a report's `dashboardConfig` and of a section's `chartSpec`: what the report view
 * (views/report-view.ts) draws, and what the catalog validator accepts before anything is stored. One definition
 * for both, exported as JSON Schema to docs/schemas/ by scripts/catalog-schemas.mjs (a test holds the committed
 * files equal to these). Strict objects: a misspelt key is refused at write time instead of silently not drawn.
 */

const Column = z.string().min(1).max(300);

/** bar and line charts: one x column, one or more y columns; a pie chart: a label column and a value column. */
export const ChartSpecSchema = z
  .union([
    z.strictObject({
      type: z.enum(['bar', 'line']).describe('bar: one bar group per x value; line: one line per y column'),
      x: Column.describe('column on the x axis (a category or a date)'),
      y: z.union([Column, z.array(Column).min(1).max(8)]).describe('numeric column, or columns, drawn against x'),
    }),
    z.strictObject({
      type: z.literal('pie'),
      label: Column.describe('column naming each slice'),
      value: Column.describe('numeric column sizing each slice'),
    }),
  ])
  .meta({ title: 'chartSpec', description: "A report section's inline chart, drawn from the section's rows." });
export type ChartSpec = z.infer<typeof ChartSpecSchema>;

export const TileSchema = z.strictObject({
  queryId: z.string().min(1).describe('id of a section of the same report'),
  kind: z.enum(['kpi', 'chart', 'table']).describe("kpi: the first row's values; chart: the section's chartSpec; table: the rows"),
  span: z.number().int().min(1).max(4).optional().describe('columns the tile spans (at most the grid columns)'),
});
export type Tile = z.infer<typeof TileSchema>;

export const DashboardConfigSchema = z
  .strictObject({
    layout: z.enum(['grid', 'stack']).optional().describe('grid: tiles in `columns` columns; stack: one column'),
    columns: z.number().int().min(1).max(4).optional().describe('grid columns (default 1)'),
    tiles: z.array(TileSchema).max(50).describe('the tiles, in reading order'),
  })
  .meta({ title: 'dashboardConfig', description: "A report's dashboard: which sections to show as tiles, how, and in what order." });
export type DashboardConfig = z.infer<typeof DashboardConfigSchema>;
