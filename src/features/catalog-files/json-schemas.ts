import { z } from 'zod';
import { MemoryFileSchema, ReportFileSchema, SavedQueryFileSchema } from './format';
import { ChartSpecSchema, DashboardConfigSchema } from './shapes';

/**
 * The catalog's JSON Schemas as published in docs/schemas/ (file name -> schema), generated from the zod schemas
 * the loader, the checks and the report view use. scripts/catalog-schemas.mjs writes them; a test holds the
 * committed files equal to these.
 */
export function catalogJsonSchemas(): Record<string, unknown> {
  const make = (schema: z.ZodType, id: string) => ({
    ...z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' }),
    $id: id,
  });
  return {
    'catalog-report.schema.json': make(ReportFileSchema, 'catalog-report.schema.json'),
    'catalog-saved-query.schema.json': make(SavedQueryFileSchema, 'catalog-saved-query.schema.json'),
    'catalog-memory.schema.json': make(MemoryFileSchema, 'catalog-memory.schema.json'),
    'chart-spec.schema.json': make(ChartSpecSchema, 'chart-spec.schema.json'),
    'dashboard-config.schema.json': make(DashboardConfigSchema, 'dashboard-config.schema.json'),
  };
}
