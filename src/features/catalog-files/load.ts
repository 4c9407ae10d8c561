import { z } from 'zod';
import {
  type Catalog,
  CATALOG_FOLDERS,
  type ItemKind,
  memoryFromFile,
  MemoryFileSchema,
  reportFromFile,
  ReportFileSchema,
  savedQueryFromFile,
  SavedQueryFileSchema,
  sortCatalog,
} from './format';
import { type JsonPath, lineAt, lineOfPath, valueLines } from './json-lines';

/** One refusal: the file, the item in it (`report rpt_x section rq_y`) and the line, where known. */
export interface Problem {
  file: string;
  item?: string;
  line?: number;
  message: string;
}

export function formatProblem(p: Problem): string {
  return `${p.file}${p.line === undefined ? '' : `:${p.line}`}: ${p.item ? `${p.item}: ` : ''}${p.message}`;
}

/** A file of the folder: its path relative to the folder (`reports/rpt_x.json`) and its text. */
export interface CatalogFile {
  path: string;
  text: string;
}

/** Where an item came from, so later checks can name the file and line. */
export interface ItemSource {
  file: string;
  /** Path of the item inside the file's JSON (a section: ['sections', 2]). */
  at: JsonPath;
  lines: Map<string, number>;
}

export interface LoadedCatalog {
  catalog: Catalog;
  /** By `report:<id>`, `section:<id>`, `saved:<id>`, `memory:<id>`. */
  sources: Map<string, ItemSource>;
  problems: Problem[];
  /**
   * Query ids the folder defines more than once (refused above, the later definition left out of `catalog`): the
   * folder does define them, so no later check may say it does not.
   */
  duplicateQueryIds: Set<string>;
}

/** The line of `path` below an item's own position in its file. */
export function sourceLine(src: ItemSource | undefined, path: JsonPath = []): number | undefined {
  return src ? lineOfPath(src.lines, [...src.at, ...path]) : undefined;
}

/**
 * The field names an object schema accepts at `path` inside `schema` (through arrays, optional, nullable and
 * unions), for "unknown field" refusals: the reader learns what to write instead.
 */
function knownFields(schema: z.ZodType, path: readonly (string | number)[]): string[] {
  let at: z.ZodType[] = [schema];
  const unwrap = (t: z.ZodType): z.ZodType[] => {
    if (t instanceof z.ZodOptional || t instanceof z.ZodNullable || t instanceof z.ZodDefault) return unwrap(t.unwrap() as z.ZodType);
    if (t instanceof z.ZodUnion) return (t.options as z.ZodType[]).flatMap(unwrap);
    if (t instanceof z.ZodPipe) return unwrap(t.in as z.ZodType);
    return [t];
  };
  for (const step of path) {
    at = at.flatMap(unwrap).flatMap((t): z.ZodType[] => {
      if (typeof step === 'number') return t instanceof z.ZodArray ? [t.element as z.ZodType] : [];
      if (t instanceof z.ZodObject) {
        const field = (t.shape as Record<string, z.ZodType>)[step];
        return field ? [field] : [];
      }
      return [];
    });
  }
  const keys = at.flatMap(unwrap).flatMap((t) => (t instanceof z.ZodObject ? Object.keys(t.shape as object) : []));
  return [...new Set(keys)].filter((k) => k !== '$schema');
}

const FOLDER_KIND = new Map<string, ItemKind>(Object.entries(CATALOG_FOLDERS).map(([k, v]) => [v, k as ItemKind]));

const SCHEMAS = { reports: ReportFileSchema, savedQueries: SavedQueryFileSchema, memories: MemoryFileSchema } as const;
const ITEM_WORD = { reports: 'report', savedQueries: 'saved query', memories: 'memory' } as const;

/**
 * Reads a catalog folder's files: JSON syntax, each file's schema, and ids unique (report ids among reports,
 * memory ids among memories, and one namespace for report sections and saved queries, which callers run by the
 * same `queryId`). Every problem names the file, the item and the line it can. Files that are not `.json` are
 * ignored (a README may sit beside them); a `.json` outside the three folders is refused.
 */
export function loadCatalog(files: readonly CatalogFile[]): LoadedCatalog {
  const problems: Problem[] = [];
  const sources = new Map<string, ItemSource>();
  const catalog: Catalog = { reports: [], savedQueries: [], memories: [] };
  /** queryId -> where it was first defined, for duplicate messages. */
  const queryIds = new Map<string, string>();
  const duplicateQueryIds = new Set<string>();
  const firstOf = new Map<string, string>();

  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of sorted) {
    if (!f.path.endsWith('.json')) continue;
    const parts = f.path.split('/');
    const kind = parts.length === 2 ? FOLDER_KIND.get(parts[0] ?? '') : undefined;
    if (!kind) {
      problems.push({
        file: f.path,
        message: `not in ${Object.values(CATALOG_FOLDERS)
          .map((d) => `${d}/`)
          .join(', ')}: move it into one of them`,
      });
      continue;
    }
    let json: unknown;
    try {
      json = JSON.parse(f.text);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const pos = /position (\d+)/.exec(message);
      problems.push({ file: f.path, line: pos ? lineAt(f.text, Number(pos[1])) : undefined, message: `not valid JSON: ${message}` });
      continue;
    }
    const lines = valueLines(f.text);
    const rawId = json && typeof json === 'object' && 'id' in json && typeof json.id === 'string' ? json.id : undefined;
    const item = `${ITEM_WORD[kind]}${rawId ? ` ${rawId}` : ''}`;
    const parsed = (SCHEMAS[kind] as z.ZodType).safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues.slice(0, 10)) {
        const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
        const where = path.length > 0 ? `${path.join('.')}: ` : '';
        const known = issue.code === 'unrecognized_keys' ? knownFields(SCHEMAS[kind], path) : [];
        // The line of the unknown field itself, not of the object holding it.
        const at = issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? [...path, issue.keys[0]] : path;
        problems.push({
          file: f.path,
          item,
          line: lineOfPath(lines, at),
          message: `${where}${issue.message}${known.length > 0 ? `; the known fields are ${known.join(', ')}` : ''}`,
        });
      }
      continue;
    }
    const claim = (key: string, label: string, at: JsonPath): boolean => {
      const prior = firstOf.get(key);
      if (prior !== undefined) {
        problems.push({ file: f.path, item: label, line: lineOfPath(lines, at), message: `duplicate id: already defined in ${prior}` });
        return false;
      }
      firstOf.set(key, f.path);
      return true;
    };
    if (kind === 'reports') {
      const r = reportFromFile(parsed.data as z.infer<typeof ReportFileSchema>);
      if (!claim(`report:${r.id}`, `report ${r.id}`, ['id'])) continue;
      sources.set(`report:${r.id}`, { file: f.path, at: [], lines });
      r.sections.forEach((s, i) => {
        const label = `report ${r.id} section ${s.id}`;
        const prior = queryIds.get(s.id);
        if (prior !== undefined) {
          duplicateQueryIds.add(s.id);
          problems.push({
            file: f.path,
            item: label,
            line: lineOfPath(lines, ['sections', i, 'id']),
            message: `duplicate query id: already used by ${prior}`,
          });
        } else {
          queryIds.set(s.id, `${label} (${f.path})`);
          sources.set(`section:${s.id}`, { file: f.path, at: ['sections', i], lines });
        }
      });
      catalog.reports.push(r);
    } else if (kind === 'savedQueries') {
      const q = savedQueryFromFile(parsed.data as z.infer<typeof SavedQueryFileSchema>);
      const prior = queryIds.get(q.id);
      if (prior !== undefined) {
        duplicateQueryIds.add(q.id);
        problems.push({
          file: f.path,
          item: `saved query ${q.id}`,
          line: lineOfPath(lines, ['id']),
          message: `duplicate query id: already used by ${prior}`,
        });
        continue;
      }
      queryIds.set(q.id, `saved query ${q.id} (${f.path})`);
      sources.set(`saved:${q.id}`, { file: f.path, at: [], lines });
      catalog.savedQueries.push(q);
    } else {
      const m = memoryFromFile(parsed.data as z.infer<typeof MemoryFileSchema>);
      if (!claim(`memory:${m.id}`, `memory ${m.id}`, ['id'])) continue;
      sources.set(`memory:${m.id}`, { file: f.path, at: [], lines });
      catalog.memories.push(m);
    }
  }
  return { catalog: sortCatalog(catalog), sources, problems, duplicateQueryIds };
}
