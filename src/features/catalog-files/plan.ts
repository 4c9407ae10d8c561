import { newId, sha256Hex } from '../../lib/ids';
import {
  createMemoryStatements,
  deleteMemoryStatements,
  restoreMemoryStatements,
  type Statement,
  updateMemoryStatements,
  type WriteMeta,
} from '../memories/store';
import { templateSlots } from '../../catalog/template';
import {
  type Catalog,
  type CatalogMemory,
  type CatalogReport,
  type CatalogSavedQuery,
  type CatalogSection,
  canonicalJson,
  type Owner,
  ownerText,
  sortCatalog,
} from './format';

/**
 * The plan of a catalog folder against a database: what `catalog apply` adds, changes and removes, and the
 * statements that do exactly that in one D1 batch (one transaction: all or nothing). Pure: the caller reads the
 * database with READ_CATALOG_SQL and runs the statements.
 */

type Row = Record<string, unknown>;

/** The reads a plan needs, in this order, as one batch: organizations, brands, reports, sections, saved queries, memories. */
export const READ_CATALOG_SQL = [
  'SELECT id FROM organizations ORDER BY id',
  'SELECT id, org_id, dataset FROM brands ORDER BY id',
  'SELECT id, type, org_id, brand_id, name, description, instructions, dashboard_config FROM reports ORDER BY id',
  'SELECT id, report_id, ordinal, name, description, sql_template, narrative_hints, chart_spec FROM report_queries ORDER BY ' +
    'report_id, ordinal',
  'SELECT id, brand_id, name, description, sql, tables FROM saved_queries ORDER BY id',
  'SELECT id, scope, org_id, brand_id, table_name, title, content, deleted_at FROM memories ORDER BY id',
] as const;

export interface StoredCatalog {
  orgs: string[];
  brands: { id: string; orgId: string; dataset: string | null }[];
  catalog: Catalog;
  /** Memories that exist but are deleted (a folder naming one restores it). */
  deletedMemories: CatalogMemory[];
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const json = (v: unknown): unknown => {
  if (v === null || v === undefined) return null;
  try {
    return JSON.parse(String(v));
  } catch {
    return String(v);
  }
};

function ownerOf(scope: unknown, orgId: unknown, brandId: unknown): Owner {
  if (scope === 'org') return { scope: 'org', orgId: String(orgId), brandId: null };
  if (scope === 'brand') return { scope: 'brand', orgId: null, brandId: String(brandId) };
  return { scope: 'system', orgId: null, brandId: null };
}

/** The stored catalog from the results of READ_CATALOG_SQL. */
export function storedCatalog(results: readonly Row[][]): StoredCatalog {
  const [orgs = [], brands = [], reports = [], sections = [], saved = [], memories = []] = results;
  const sectionsOf = new Map<string, CatalogSection[]>();
  for (const s of sections) {
    const list = sectionsOf.get(String(s.report_id)) ?? [];
    list.push({
      id: String(s.id),
      name: str(s.name),
      description: str(s.description),
      sql: String(s.sql_template),
      narrativeHints: str(s.narrative_hints),
      chartSpec: json(s.chart_spec),
    });
    sectionsOf.set(String(s.report_id), list);
  }
  const toMemory = (m: Row): CatalogMemory => ({
    id: String(m.id),
    owner: ownerOf(m.scope, m.org_id, m.brand_id),
    table: str(m.table_name),
    title: String(m.title),
    content: String(m.content),
  });
  return {
    orgs: orgs.map((o) => String(o.id)),
    brands: brands.map((b) => ({ id: String(b.id), orgId: String(b.org_id), dataset: str(b.dataset) })),
    catalog: sortCatalog({
      reports: reports.map((r): CatalogReport => ({
        id: String(r.id),
        owner: ownerOf(r.type, r.org_id, r.brand_id),
        name: String(r.name),
        description: str(r.description),
        instructions: str(r.instructions),
        dashboardConfig: json(r.dashboard_config),
        sections: sectionsOf.get(String(r.id)) ?? [],
      })),
      savedQueries: saved.map((q): CatalogSavedQuery => ({
        id: String(q.id),
        brandId: String(q.brand_id),
        name: str(q.name),
        description: str(q.description),
        sql: String(q.sql),
        tables: q.tables === null || q.tables === undefined ? null : (json(q.tables) as string[]),
      })),
      memories: memories.filter((m) => m.deleted_at === null || m.deleted_at === undefined).map(toMemory),
    }),
    deletedMemories: memories.filter((m) => m.deleted_at !== null && m.deleted_at !== undefined).map(toMemory),
  };
}

export type ChangeKind = 'report' | 'section' | 'savedQuery' | 'memory';

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface PlanEntry {
  action: 'add' | 'change' | 'remove';
  kind: ChangeKind;
  id: string;
  /** A section's report (for a removed one, the report it was in). */
  report?: string;
  /** For changes: what differs. */
  fields?: FieldChange[];
  /** A removal left out because the plan was made without --prune. */
  skipped?: boolean;
  /** A memory change that restores a deleted memory. */
  restore?: boolean;
  /** An added section's or saved query's SQL, shown under it: what will run is reviewed like a changed one. */
  sql?: string;
}

export interface CatalogPlan {
  entries: PlanEntry[];
  counts: { add: number; change: number; remove: number; skipped: number };
  /** sha256 of the folder's catalog (canonical JSON): the version id `catalog apply` records. */
  contentHash: string;
  /** sha256 of the entries: `catalog apply --expect` refuses when the plan it would apply has another. */
  planHash: string;
  prune: boolean;
}

const KIND_WORD: Record<ChangeKind, string> = { report: 'report', section: 'section', savedQuery: 'saved query', memory: 'memory' };

function diffFields(pairs: [string, unknown, unknown][]): FieldChange[] {
  return pairs.filter(([, a, b]) => canonicalJson(a) !== canonicalJson(b)).map(([field, before, after]) => ({ field, before, after }));
}

const ownerField = (o: Owner) => ownerText(o);

/** The plan of `folder` against `stored`. Removals of items absent from the folder apply only with `prune`. */
export async function planCatalog(folder: Catalog, stored: StoredCatalog, opts: { prune: boolean }): Promise<CatalogPlan> {
  const entries: PlanEntry[] = [];
  const now = stored.catalog;
  const folderReportIds = new Set(folder.reports.map((r) => r.id));
  const storedSection = new Map<string, { report: string; ordinal: number; section: CatalogSection }>();
  for (const r of now.reports) r.sections.forEach((s, i) => storedSection.set(s.id, { report: r.id, ordinal: i + 1, section: s }));
  const folderSectionIds = new Set(folder.reports.flatMap((r) => r.sections.map((s) => s.id)));

  for (const r of folder.reports) {
    const old = now.reports.find((x) => x.id === r.id);
    if (!old) entries.push({ action: 'add', kind: 'report', id: r.id });
    else {
      const fields = diffFields([
        ['owner', ownerField(old.owner), ownerField(r.owner)],
        ['name', old.name, r.name],
        ['description', old.description, r.description],
        ['instructions', old.instructions, r.instructions],
        ['dashboardConfig', old.dashboardConfig, r.dashboardConfig],
      ]);
      if (fields.length > 0) entries.push({ action: 'change', kind: 'report', id: r.id, fields });
    }
    r.sections.forEach((s, i) => {
      const prior = storedSection.get(s.id);
      if (!prior) {
        entries.push({ action: 'add', kind: 'section', id: s.id, report: r.id, sql: s.sql });
        return;
      }
      const p = prior.section;
      const fields = diffFields([
        ['report', prior.report, r.id],
        ['position', prior.ordinal, i + 1],
        ['name', p.name, s.name],
        ['description', p.description, s.description],
        ['sql', p.sql, s.sql],
        ['narrativeHints', p.narrativeHints, s.narrativeHints],
        ['chartSpec', p.chartSpec, s.chartSpec],
      ]);
      if (fields.length > 0) entries.push({ action: 'change', kind: 'section', id: s.id, report: r.id, fields });
    });
  }
  // Sections of reports the folder defines, gone from the folder: removed with their report's change (no --prune needed).
  for (const r of now.reports) {
    const kept = folderReportIds.has(r.id);
    for (const s of r.sections) {
      if (folderSectionIds.has(s.id)) continue;
      if (kept) entries.push({ action: 'remove', kind: 'section', id: s.id, report: r.id });
    }
    if (!kept) entries.push({ action: 'remove', kind: 'report', id: r.id, ...(opts.prune ? {} : { skipped: true }) });
  }

  for (const q of folder.savedQueries) {
    const old = now.savedQueries.find((x) => x.id === q.id);
    if (!old) entries.push({ action: 'add', kind: 'savedQuery', id: q.id, sql: q.sql });
    else {
      const fields = diffFields([
        ['brand', old.brandId, q.brandId],
        ['name', old.name, q.name],
        ['description', old.description, q.description],
        ['sql', old.sql, q.sql],
        ['tables', old.tables, q.tables],
      ]);
      if (fields.length > 0) entries.push({ action: 'change', kind: 'savedQuery', id: q.id, fields });
    }
  }
  const folderSaved = new Set(folder.savedQueries.map((q) => q.id));
  for (const q of now.savedQueries)
    if (!folderSaved.has(q.id)) entries.push({ action: 'remove', kind: 'savedQuery', id: q.id, ...(opts.prune ? {} : { skipped: true }) });

  for (const m of folder.memories) {
    const live = now.memories.find((x) => x.id === m.id);
    const deleted = live ? undefined : stored.deletedMemories.find((x) => x.id === m.id);
    const old = live ?? deleted;
    if (!old) {
      entries.push({ action: 'add', kind: 'memory', id: m.id });
      continue;
    }
    const fields = diffFields([
      ['owner', ownerField(old.owner), ownerField(m.owner)],
      ['table', old.table, m.table],
      ['title', old.title, m.title],
      ['content', old.content, m.content],
    ]);
    if (deleted) entries.push({ action: 'change', kind: 'memory', id: m.id, fields, restore: true });
    else if (fields.length > 0) entries.push({ action: 'change', kind: 'memory', id: m.id, fields });
  }
  const folderMemories = new Set(folder.memories.map((m) => m.id));
  for (const m of now.memories)
    if (!folderMemories.has(m.id)) entries.push({ action: 'remove', kind: 'memory', id: m.id, ...(opts.prune ? {} : { skipped: true }) });

  const counts = { add: 0, change: 0, remove: 0, skipped: 0 };
  for (const e of entries) {
    if (e.skipped) counts.skipped++;
    else counts[e.action]++;
  }
  return {
    entries,
    counts,
    contentHash: await sha256Hex(canonicalJson(sortCatalog(folder))),
    planHash: await sha256Hex(canonicalJson(entries)),
    prune: opts.prune,
  };
}

/** True when applying the plan would change nothing. */
export function planIsEmpty(p: CatalogPlan): boolean {
  return p.counts.add + p.counts.change + p.counts.remove === 0;
}

export function planSummary(p: CatalogPlan): string {
  const skipped = p.counts.skipped > 0 ? `; ${p.counts.skipped} removal(s) left out without --prune` : '';
  return `${p.counts.add} to add, ${p.counts.change} to change, ${p.counts.remove} to remove${skipped}`;
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Lines of a text diff (`-`/`+`/` `), for multi-line fields; a longest-common-subsequence diff, trimmed to changes and 1 line of context.
 */
function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const n = a.length;
  const m = b.length;
  if (n * m > 250_000) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: { op: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push({ op: ' ', line: a[i]! });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push({ op: '+', line: b[j++]! });
    else out.push({ op: '-', line: a[i++]! });
  }
  const changedAt = (k: number) => out[k] !== undefined && out[k]?.op !== ' ';
  const keep = out.map((_, k) => changedAt(k) || changedAt(k - 1) || changedAt(k + 1));
  const lines: string[] = [];
  out.forEach((x, k) => {
    if (keep[k]) lines.push(`${x.op} ${x.line}`);
    else if (keep[k - 1]) lines.push('  ...');
  });
  return lines;
}

function show(v: unknown): string {
  if (v === null || v === undefined) return '(none)';
  return typeof v === 'string' ? JSON.stringify(v) : canonicalJson(v);
}

function fieldLines(f: FieldChange): string[] {
  if (typeof f.before === 'string' && typeof f.after === 'string' && (f.before.includes('\n') || f.after.includes('\n'))) {
    return [`${f.field}:`, ...lineDiff(f.before, f.after).map((l) => `  ${l}`)];
  }
  return [`${f.field}: ${show(f.before)} -> ${show(f.after)}`];
}

/** The plan as people read it: one line per entry (+ add, ~ change, - remove), field diffs under changes. */
export function renderPlan(p: CatalogPlan): string {
  const lines: string[] = [];
  const sym = { add: '+', change: '~', remove: '-' } as const;
  for (const e of p.entries) {
    const where = e.report ? ` (report ${e.report})` : '';
    const note = e.skipped ? '   [kept: removed only with --prune]' : e.restore ? '   [restores the deleted memory]' : '';
    lines.push(`${e.skipped ? ' ' : sym[e.action]} ${KIND_WORD[e.kind]} ${e.id}${where}${note}`);
    for (const f of e.fields ?? []) for (const l of fieldLines(f)) lines.push(`      ${l}`);
    if (e.sql !== undefined) lines.push('      sql:', ...e.sql.split('\n').map((l) => `        + ${l}`));
  }
  if (lines.length === 0) lines.push('No changes: the database already holds this catalog.');
  lines.push('', planSummary(p));
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

/** Who applies: recorded in catalog_versions and as the memories' writer. */
export interface ApplyMeta {
  actor: { kind: 'cli' | 'seed'; name: string };
  now: number;
  /** true: insert what is missing only (the demo seed: ON CONFLICT DO NOTHING, an operator's edits stay). */
  ifMissing?: boolean;
  /** Revision ids for memory writes (default random); the seed passes fixed ones so a rerun adds none. */
  revisionId?: (memoryId: string) => string;
}

function stmt(sql: string, ...params: (string | number | null)[]): Statement {
  return { sql, params };
}

const jsonText = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

function ownerColumns(o: Owner): [string, string | null, string | null] {
  return [o.scope, o.orgId, o.brandId];
}

/**
 * The statements that apply `plan` (made from `folder`): removals first (sections before their reports), then
 * reports, sections (a report whose sections move is renumbered through negative positions, so UNIQUE
 * (report_id, ordinal) holds at every step), saved queries and memories. Run them as one batch.
 */
export function applyStatements(folder: Catalog, plan: CatalogPlan, meta: ApplyMeta): Statement[] {
  const out: Statement[] = [];
  const conflict = meta.ifMissing ? ' ON CONFLICT DO NOTHING' : '';
  const reports = new Map(folder.reports.map((r) => [r.id, r]));
  const saved = new Map(folder.savedQueries.map((q) => [q.id, q]));
  const memories = new Map(folder.memories.map((m) => [m.id, m]));
  const sectionOf = new Map<string, { report: CatalogReport; ordinal: number; section: CatalogSection }>();
  for (const r of folder.reports) r.sections.forEach((s, i) => sectionOf.set(s.id, { report: r, ordinal: i + 1, section: s }));
  const write = (memoryId: string): WriteMeta => ({
    revisionId: meta.revisionId ? meta.revisionId(memoryId) : newId('mrev'),
    actor: { kind: meta.actor.kind, id: null, name: meta.actor.name },
    transport: meta.actor.kind === 'seed' ? 'seed' : 'catalog',
    requestId: null,
    now: meta.now,
  });
  const live = plan.entries.filter((e) => !e.skipped);
  const of = (kind: ChangeKind, action: PlanEntry['action']) => live.filter((e) => e.kind === kind && e.action === action);

  for (const e of of('section', 'remove')) out.push(stmt('DELETE FROM report_queries WHERE id = ?1', e.id));
  for (const e of of('report', 'remove')) {
    out.push(stmt('DELETE FROM report_queries WHERE report_id = ?1', e.id));
    out.push(stmt('DELETE FROM reports WHERE id = ?1', e.id));
  }
  for (const e of of('savedQuery', 'remove')) out.push(stmt('DELETE FROM saved_queries WHERE id = ?1', e.id));
  for (const e of of('memory', 'remove')) out.push(...deleteMemoryStatements(e.id, write(e.id)));

  for (const e of live.filter((x) => x.kind === 'report' && x.action !== 'remove')) {
    const r = reports.get(e.id)!;
    const values: (string | null)[] = [r.id, ...ownerColumns(r.owner), r.name, r.description, r.instructions, jsonText(r.dashboardConfig)];
    if (e.action === 'add') {
      out.push({
        sql:
          `INSERT INTO reports (id, type, org_id, brand_id, name, description, instructions, dashboard_config, created_at) VALUES ` +
          `(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)${conflict}`,
        params: [...values, meta.now],
      });
    } else {
      out.push({
        sql:
          'UPDATE reports SET type = ?2, org_id = ?3, brand_id = ?4, name = ?5, description = ?6, instructions = ?7, ' +
          'dashboard_config = ?8 WHERE id = ?1',
        params: values,
      });
    }
  }

  // Reports of the folder whose sections are added, removed or moved get renumbered as a whole.
  const moved = (e: PlanEntry) => e.action !== 'change' || (e.fields ?? []).some((f) => f.field === 'report' || f.field === 'position');
  const renumber = new Set(live.filter((e) => e.kind === 'section' && moved(e) && e.report && reports.has(e.report)).map((e) => e.report!));
  if (!meta.ifMissing && renumber.size > 0) {
    const ids = [...renumber];
    out.push({
      sql: `UPDATE report_queries SET ordinal = -ordinal WHERE report_id IN (${ids.map((_, i) => `?${i + 1}`).join(', ')})`,
      params: ids,
    });
  }
  const changed = new Set(of('section', 'change').map((e) => e.id));
  const added = new Set(of('section', 'add').map((e) => e.id));
  for (const r of folder.reports) {
    for (const s of r.sections) {
      const at = sectionOf.get(s.id)!;
      const values: (string | number | null)[] = [
        s.id,
        r.id,
        at.ordinal,
        s.name,
        s.description,
        s.sql,
        JSON.stringify(templateSlots(s.sql)),
        s.narrativeHints,
        jsonText(s.chartSpec),
      ];
      if (added.has(s.id)) {
        out.push({
          sql:
            `INSERT INTO report_queries (id, report_id, ordinal, name, description, sql_template, parameters, narrative_hints, ` +
            `chart_spec) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)${conflict}`,
          params: values,
        });
      } else if (changed.has(s.id) || (!meta.ifMissing && renumber.has(r.id))) {
        out.push({
          sql:
            'UPDATE report_queries SET report_id = ?2, ordinal = ?3, name = ?4, description = ?5, sql_template = ?6, parameters = ' +
            '?7, narrative_hints = ?8, chart_spec = ?9 WHERE id = ?1',
          params: values,
        });
      }
    }
  }

  for (const e of live.filter((x) => x.kind === 'savedQuery' && x.action !== 'remove')) {
    const q = saved.get(e.id)!;
    const values: (string | null)[] = [q.id, q.brandId, q.name, q.description, q.sql, jsonText(q.tables)];
    if (e.action === 'add') {
      out.push({
        sql:
          `INSERT INTO saved_queries (id, brand_id, name, description, sql, tables, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ` +
          `?7)${conflict}`,
        params: [...values, meta.now],
      });
    } else {
      out.push({
        sql: 'UPDATE saved_queries SET brand_id = ?2, name = ?3, description = ?4, sql = ?5, tables = ?6 WHERE id = ?1',
        params: values,
      });
    }
  }

  for (const e of live.filter((x) => x.kind === 'memory' && x.action !== 'remove')) {
    const m = memories.get(e.id)!;
    if (e.action === 'add') {
      out.push(...createMemoryStatements({ id: m.id, ...m.owner, table: m.table, title: m.title, content: m.content }, write(m.id)));
      continue;
    }
    if (e.restore) out.push(...restoreMemoryStatements(m.id, write(m.id)));
    const patch = Object.fromEntries((e.fields ?? []).filter((f) => f.field !== 'owner').map((f) => [f.field, f.after]));
    if (Object.keys(patch).length > 0) out.push(...updateMemoryStatements(m.id, patch, write(m.id)));
  }
  return out;
}
