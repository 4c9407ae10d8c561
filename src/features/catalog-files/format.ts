import { z } from 'zod';
import { ChartSpecSchema, DashboardConfigSchema } from './shapes';

/**
 * The catalog folder format (docs/catalog.md, "Catalog files"): one JSON file per report, saved query and memory,
 * under `reports/`, `saved-queries/` and `memories/` of the folder. Long text (SQL, Markdown) may be written as an
 * array of lines, joined with "\n", so a file diffs and reviews line by line. The zod schemas here are the format's
 * one definition: the loader parses with them and scripts/catalog-schemas.mjs exports them as JSON Schema to
 * docs/schemas/ for editors.
 */

/** Ids as the admin CLI makes them: 1-64 letters, digits, `_` or `-`, starting with a letter or digit. */
export const CATALOG_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const Id = z.string().regex(CATALOG_ID_RE, { error: 'must be 1-64 letters, digits, _ or -, starting with a letter or digit' });

/** A string, or its lines as an array of strings (joined with "\n"). */
const Text = z.union([z.string(), z.array(z.string())]);
const OptionalText = Text.nullable().optional();

/** Who owns a report or memory: `system`, `org:<orgId>` or `brand:<brandId>`. */
const OwnerText = z
  .string()
  .regex(/^(system|org:[A-Za-z0-9][A-Za-z0-9_-]{0,63}|brand:[A-Za-z0-9][A-Za-z0-9_-]{0,63})$/, {
    error: 'must be "system", "org:<orgId>" or "brand:<brandId>"',
  })
  .describe('system (every brand), org:<orgId> (every brand of the organization) or brand:<brandId> (that brand)');

const SchemaRef = z.string().optional().describe('path or URL of this JSON Schema, for editors; ignored by the loader');

export const SectionFileSchema = z.strictObject({
  id: Id.describe('the queryId callers send; unique across every report section and saved query'),
  name: z.string().min(1).nullable().optional(),
  description: OptionalText,
  sql: Text.describe('BigQuery SQL template; slots {dataset}, {start_date}, {end_date} are filled at run time'),
  narrativeHints: OptionalText.describe('how an assistant should narrate the rows'),
  chartSpec: ChartSpecSchema.nullable().optional(),
});

export const ReportFileSchema = z
  .strictObject({
    $schema: SchemaRef,
    id: Id,
    owner: OwnerText,
    name: z.string().min(1),
    description: OptionalText,
    instructions: OptionalText.describe('Markdown for whoever runs the report'),
    dashboardConfig: DashboardConfigSchema.nullable().optional(),
    sections: z.array(SectionFileSchema).max(50).describe('in display order'),
  })
  .meta({ title: 'Catalog report', description: 'One report of a catalog folder (reports/<id>.json).' });

export const SavedQueryFileSchema = z
  .strictObject({
    $schema: SchemaRef,
    id: Id.describe('the queryId callers send; unique across every report section and saved query'),
    brand: Id.describe('the owning brand id'),
    name: z.string().min(1).nullable().optional(),
    description: OptionalText,
    sql: Text.describe("concrete BigQuery SQL over the brand's dataset (no slots)"),
    tables: z.array(z.string().min(1)).nullable().optional().describe('the tables the SQL reads, as project.dataset.table'),
  })
  .meta({ title: 'Catalog saved query', description: 'One saved query of a catalog folder (saved-queries/<id>.json).' });

export const MemoryFileSchema = z
  .strictObject({
    $schema: SchemaRef,
    id: Id,
    owner: OwnerText,
    table: z.string().nullable().optional().describe('the table of the dataset the memory is about; absent for general context'),
    title: z.string(),
    content: Text.describe('Markdown'),
  })
  .meta({ title: 'Catalog memory', description: 'One memory of a catalog folder (memories/<id>.json).' });

export type Owner =
  | { scope: 'system'; orgId: null; brandId: null }
  | { scope: 'org'; orgId: string; brandId: null }
  | { scope: 'brand'; orgId: null; brandId: string };

export interface CatalogSection {
  id: string;
  name: string | null;
  description: string | null;
  sql: string;
  narrativeHints: string | null;
  chartSpec: unknown;
}

export interface CatalogReport {
  id: string;
  owner: Owner;
  name: string;
  description: string | null;
  instructions: string | null;
  dashboardConfig: unknown;
  sections: CatalogSection[];
}

export interface CatalogSavedQuery {
  id: string;
  brandId: string;
  name: string | null;
  description: string | null;
  sql: string;
  tables: string[] | null;
}

export interface CatalogMemory {
  id: string;
  owner: Owner;
  table: string | null;
  title: string;
  content: string;
}

/** A catalog, however it was read (files or D1): every list ordered by id, absent values null. */
export interface Catalog {
  reports: CatalogReport[];
  savedQueries: CatalogSavedQuery[];
  memories: CatalogMemory[];
}

/** The folders of a catalog and the kind of item each holds. */
export const CATALOG_FOLDERS = { reports: 'reports', savedQueries: 'saved-queries', memories: 'memories' } as const;
export type ItemKind = keyof typeof CATALOG_FOLDERS;

export function joinText(t: string | string[] | null | undefined): string | null {
  if (t === null || t === undefined) return null;
  return typeof t === 'string' ? t : t.join('\n');
}

/** Text as a file writes it: multi-line text as its lines, one-line text as a string. */
export function splitText(t: string): string | string[] {
  return t.includes('\n') ? t.split('\n') : t;
}

export function parseOwner(text: string): Owner {
  if (text === 'system') return { scope: 'system', orgId: null, brandId: null };
  const [kind, id = ''] = text.split(':');
  return kind === 'org' ? { scope: 'org', orgId: id, brandId: null } : { scope: 'brand', orgId: null, brandId: id };
}

export function ownerText(o: Owner): string {
  return o.scope === 'system' ? 'system' : o.scope === 'org' ? `org:${o.orgId}` : `brand:${o.brandId}`;
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function sortCatalog(c: Catalog): Catalog {
  return { reports: [...c.reports].sort(byId), savedQueries: [...c.savedQueries].sort(byId), memories: [...c.memories].sort(byId) };
}

export function reportFromFile(f: z.infer<typeof ReportFileSchema>): CatalogReport {
  return {
    id: f.id,
    owner: parseOwner(f.owner),
    name: f.name,
    description: joinText(f.description),
    instructions: joinText(f.instructions),
    dashboardConfig: f.dashboardConfig ?? null,
    sections: f.sections.map((s) => ({
      id: s.id,
      name: s.name ?? null,
      description: joinText(s.description),
      sql: joinText(s.sql) ?? '',
      narrativeHints: joinText(s.narrativeHints),
      chartSpec: s.chartSpec ?? null,
    })),
  };
}

export function savedQueryFromFile(f: z.infer<typeof SavedQueryFileSchema>): CatalogSavedQuery {
  return {
    id: f.id,
    brandId: f.brand,
    name: f.name ?? null,
    description: joinText(f.description),
    sql: joinText(f.sql) ?? '',
    tables: f.tables ?? null,
  };
}

export function memoryFromFile(f: z.infer<typeof MemoryFileSchema>): CatalogMemory {
  return { id: f.id, owner: parseOwner(f.owner), table: f.table ?? null, title: f.title, content: joinText(f.content) ?? '' };
}

/** Drops null and undefined fields (a file leaves out what is unset). */
function present<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

const textOrNull = (t: string | null) => (t === null ? null : splitText(t));

/**
 * The files of a catalog (export): path relative to the folder -> JSON text, ending in a newline. `schemaDir`
 * is the path from the folder to docs/schemas/ (for `$schema`), or null to leave `$schema` out.
 */
export function catalogFiles(c: Catalog, schemaDir: string | null): Map<string, string> {
  const out = new Map<string, string>();
  const ref = (file: string) => (schemaDir === null ? {} : { $schema: `../${schemaDir}/${file}` });
  const write = (folder: string, id: string, value: unknown) => out.set(`${folder}/${id}.json`, `${JSON.stringify(value, null, 2)}\n`);
  for (const r of c.reports) {
    write(CATALOG_FOLDERS.reports, r.id, {
      ...ref('catalog-report.schema.json'),
      id: r.id,
      owner: ownerText(r.owner),
      name: r.name,
      ...present({ description: textOrNull(r.description), instructions: textOrNull(r.instructions), dashboardConfig: r.dashboardConfig }),
      sections: r.sections.map((s) => ({
        id: s.id,
        ...present({ name: s.name, description: textOrNull(s.description) }),
        sql: splitText(s.sql),
        ...present({ narrativeHints: textOrNull(s.narrativeHints), chartSpec: s.chartSpec }),
      })),
    });
  }
  for (const q of c.savedQueries) {
    write(CATALOG_FOLDERS.savedQueries, q.id, {
      ...ref('catalog-saved-query.schema.json'),
      id: q.id,
      brand: q.brandId,
      ...present({ name: q.name, description: textOrNull(q.description) }),
      sql: splitText(q.sql),
      ...present({ tables: q.tables }),
    });
  }
  for (const m of c.memories) {
    write(CATALOG_FOLDERS.memories, m.id, {
      ...ref('catalog-memory.schema.json'),
      id: m.id,
      owner: ownerText(m.owner),
      ...present({ table: m.table }),
      title: m.title,
      content: splitText(m.content),
    });
  }
  return out;
}

/** JSON with object keys sorted: equal values give equal text whatever order their keys were written in. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
