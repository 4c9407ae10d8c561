#!/usr/bin/env node
// Writes the catalog's JSON Schemas to docs/schemas/ from the zod schemas in src/features/catalog-files/ (the ones
// the catalog checks and the report view use), or with --check compares and exits 1 when a file differs.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CATALOG_SCHEMA_DIR } from './lib/catalog-dir.mjs';
import { importWorkerModules } from './lib/import-ts.mjs';

/** File name -> the JSON text it should hold. */
export async function expectedSchemaFiles() {
  const { catalogJsonSchemas } = await importWorkerModules({ 'src/features/catalog-files/json-schemas.ts': ['catalogJsonSchemas'] });
  return Object.entries(catalogJsonSchemas()).map(([name, schema]) => ({ name, text: `${JSON.stringify(schema, null, 2)}\n` }));
}

async function main() {
  const check = process.argv.includes('--check');
  const stale = [];
  await mkdir(CATALOG_SCHEMA_DIR, { recursive: true });
  for (const f of await expectedSchemaFiles()) {
    const path = join(CATALOG_SCHEMA_DIR, f.name);
    const now = await readFile(path, 'utf8').catch(() => null);
    if (now === f.text) continue;
    if (check) stale.push(f.name);
    else await writeFile(path, f.text);
  }
  if (stale.length > 0) {
    console.error(`docs/schemas/ is out of date (${stale.join(', ')}): run node scripts/catalog-schemas.mjs`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
