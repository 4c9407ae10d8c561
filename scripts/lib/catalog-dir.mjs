// Catalog folders on disk (docs/catalog.md, "Catalog files"): read every file of one into the list the catalog
// loader takes (paths relative to the folder, `/`-separated), and write an export. The format, checks and plan are
// the Worker's own TypeScript (src/features/catalog-files/), bundled by import-ts.mjs.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { ROOT } from './import-ts.mjs';

/** The demo catalog that `npm run dev`, the tests and the benches seed. */
export const DEMO_CATALOG_DIR = join(ROOT, 'catalog', 'demo');

/** Where the catalog JSON Schemas live (the `$schema` of exported files points here). */
export const CATALOG_SCHEMA_DIR = join(ROOT, 'docs', 'schemas');

/**
 * Every file under `dir` (recursively) as `{ path, text }`, path relative to `dir`.
 * @param {string} dir
 * @returns {Promise<{ path: string, text: string }[]>}
 */
export async function readCatalogDir(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => e.isFile());
  return Promise.all(
    files.map(async (e) => {
      const full = join(e.parentPath ?? e.path, e.name);
      return { path: relative(dir, full).split(sep).join('/'), text: await readFile(full, 'utf8') };
    }),
  );
}

/**
 * Writes an export: each file of `files` (relative path -> text) under `dir`. The three item folders are emptied
 * first, so an item gone from the database is gone from the export; other files (a README) stay.
 * @param {string} dir
 * @param {Map<string, string>} files
 * @param {readonly string[]} folders the item folders (reports, saved-queries, memories)
 */
export async function writeCatalogDir(dir, files, folders) {
  for (const f of folders) await rm(join(dir, f), { recursive: true, force: true });
  for (const [path, text] of files) {
    const full = join(dir, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  }
}

/**
 * `$schema` directory as seen from `dir` (exported files point at the repository's docs/schemas/).
 * @param {string} dir
 */
export function schemaDirFrom(dir) {
  return relative(dir, CATALOG_SCHEMA_DIR).split(sep).join('/');
}
