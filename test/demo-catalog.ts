/// <reference types="vite/client" />
import type { CatalogFile } from '../src/features/catalog-files/load';
import { loadCatalog } from '../src/features/catalog-files/load';

/**
 * The demo catalog folder (catalog/demo/) as the tests see it: its files, bundled by Vite at build time (workerd has
 * no file system), and the catalog the loader reads from them.
 */
const RAW = import.meta.glob<string>('../catalog/demo/**/*.json', { query: '?raw', import: 'default', eager: true });

export const DEMO_CATALOG_FILES: readonly CatalogFile[] = Object.entries(RAW).map(([path, text]) => ({
  path: path.slice('../catalog/demo/'.length),
  text,
}));

export const DEMO_CATALOG = loadCatalog(DEMO_CATALOG_FILES).catalog;

/** The demo memories with their owner spread (scope, orgId, brandId), as the memory tests read them. */
export const DEMO_MEMORIES = DEMO_CATALOG.memories.map((m) => ({
  id: m.id,
  ...m.owner,
  table: m.table,
  title: m.title,
  content: m.content,
}));
