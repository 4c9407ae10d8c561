// The catalog's JSON Schemas in docs/schemas/ are what the zod schemas of src/features/catalog-files/ export (the ones
// the catalog checks and the report view parse with), so editors validate exactly what `catalog apply` accepts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG_SCHEMA_DIR } from '../../scripts/lib/catalog-dir.mjs';
import { expectedSchemaFiles } from '../../scripts/catalog-schemas.mjs';

/** Generated once: each call bundles the TypeScript. */
const generated = await expectedSchemaFiles();

describe('docs/schemas', () => {
  it('holds exactly the JSON Schemas generated from the zod schemas (node scripts/catalog-schemas.mjs)', async () => {
    const files = generated;
    expect(files.map((f) => f.name).sort()).toEqual([
      'catalog-memory.schema.json',
      'catalog-report.schema.json',
      'catalog-saved-query.schema.json',
      'chart-spec.schema.json',
      'dashboard-config.schema.json',
    ]);
    for (const f of files) expect(await readFile(join(CATALOG_SCHEMA_DIR, f.name), 'utf8'), f.name).toBe(f.text);
  });

  it('the report schema refers to the same chartSpec and dashboardConfig shapes as their own files', async () => {
    const files = Object.fromEntries(generated.map((f) => [f.name, JSON.parse(f.text)]));
    const report = files['catalog-report.schema.json'];
    const strip = (/** @type {Record<string, unknown>} */ s) => Object.fromEntries(Object.entries(s).filter(([k]) => !k.startsWith('$')));
    const { anyOf: dashboardVariants } = report.properties.dashboardConfig;
    expect(dashboardVariants).toContainEqual(strip(files['dashboard-config.schema.json']));
    const { anyOf: chartVariants } = report.properties.sections.items.properties.chartSpec;
    expect(chartVariants).toContainEqual(strip(files['chart-spec.schema.json']));
  });
});
