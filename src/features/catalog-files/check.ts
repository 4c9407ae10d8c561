import { hasDataset, reportAppliesTo } from '../../catalog/snapshot';
import { ContentSchema, TableNameSchema, TitleSchema } from '../memories/fields';
import { MEMORY_LIMITS } from '../memories/rules';
import { checkSql, type GuardFailure, CONTRACT_PROJECT } from '../../sql/guard';
import { assertKnownSlots, fillTemplate, templateSlots } from '../../catalog/template';
import { type Catalog, type CatalogReport, type Owner, ownerText } from './format';
import { DashboardConfigSchema } from './shapes';
import { type LoadedCatalog, type Problem, sourceLine } from './load';

/** What a catalog is checked against: the target database's tenants, the warehouse project, its current catalog. */
export interface CheckTarget {
  project: string;
  orgs: readonly string[];
  brands: readonly { id: string; orgId: string; dataset: string | null }[];
  /** The catalog stored now (memory limits count what stays; ids of kept items must not collide). */
  current: Catalog;
  /** Whether items absent from the folder will be removed. */
  prune: boolean;
}

export interface CheckResult {
  problems: Problem[];
  /** Not refusals: what could not be checked, and why. */
  warnings: Problem[];
  /** SQL statements checked by the guard (each section once per brand it applies to, each saved query once). */
  guardChecks: number;
}

/** Dates the guard check fills `{start_date}` / `{end_date}` with: any valid window reads the same tables. */
const CHECK_WINDOW = { start_date: '2026-01-01', end_date: '2026-01-31' } as const;

/** The brands (with a dataset) a report's sections run on. */
export function reportDatasets(r: Pick<CatalogReport, 'owner'>, brands: CheckTarget['brands']): { id: string; dataset: string }[] {
  const report = { type: r.owner.scope, orgId: r.owner.orgId, brandId: r.owner.brandId };
  return brands
    .filter((b) => reportAppliesTo(report, b))
    .filter(hasDataset)
    .map((b) => ({ id: b.id, dataset: b.dataset }));
}

function ownerMissing(o: Owner, t: CheckTarget): string | null {
  if (o.scope === 'org' && !t.orgs.includes(o.orgId)) return `owner ${ownerText(o)}: organization ${o.orgId} does not exist`;
  if (o.scope === 'brand' && !t.brands.some((b) => b.id === o.brandId)) return `owner ${ownerText(o)}: brand ${o.brandId} does not exist`;
  return null;
}

function guardMessage(f: GuardFailure): string {
  return `${f.code}: ${f.message}${f.position ? ` (SQL line ${f.position.line}, column ${f.position.column})` : ''}`;
}

/** What the checks share: the target, the findings so far, and where an item's field is in the folder's files. */
interface Checking {
  target: CheckTarget;
  problems: Problem[];
  warnings: Problem[];
  guardChecks: number;
  at: (key: string, item: string, path: (string | number)[], message: string) => Problem;
}

/**
 * Everything that must hold before a catalog is written, against `target`: owners exist; templates use known
 * slots only and saved queries none; every SQL passes the SQL guard (`checkSql`, the one the Worker runs) for
 * every brand it applies to (a system report on each brand with a dataset); `tables` of a saved query are the
 * tables its SQL reads; dashboard tiles name sections of their report; memories' fields and per-owner limits.
 */
export async function checkCatalog(loaded: LoadedCatalog, target: CheckTarget): Promise<CheckResult> {
  const { catalog, sources } = loaded;
  const c: Checking = {
    target,
    problems: [],
    warnings: [],
    guardChecks: 0,
    at: (key, item, path, message) => {
      const src = sources.get(key);
      return { file: src?.file ?? '(catalog)', item, line: sourceLine(src, path), message };
    },
  };
  for (const r of catalog.reports) await checkReport(c, r);
  for (const q of catalog.savedQueries) await checkSavedQuery(c, q);
  checkIdCollisions(c, catalog, loaded.duplicateQueryIds);
  checkMemories(c, catalog);
  return { problems: c.problems, warnings: c.warnings, guardChecks: c.guardChecks };
}

/** A report: its owner, its dashboard tiles, and each section's SQL through the guard for every brand it applies to. */
async function checkReport(c: Checking, r: CatalogReport): Promise<void> {
  const rKey = `report:${r.id}`;
  const missing = ownerMissing(r.owner, c.target);
  if (missing) c.problems.push(c.at(rKey, `report ${r.id}`, ['owner'], missing));
  const sectionIds = new Set(r.sections.map((s) => s.id));
  const config = DashboardConfigSchema.safeParse(r.dashboardConfig);
  if (config.success) {
    config.data.tiles.forEach((tile, i) => {
      if (!sectionIds.has(tile.queryId)) {
        c.problems.push(
          c.at(
            rKey,
            `report ${r.id}`,
            ['dashboardConfig', 'tiles', i, 'queryId'],
            `dashboard tile names ${tile.queryId}, which is not a section of this report`,
          ),
        );
      }
    });
  }
  const brands = reportDatasets(r, c.target.brands);
  for (const s of r.sections) {
    const sKey = `section:${s.id}`;
    const item = `report ${r.id} section ${s.id}`;
    try {
      assertKnownSlots(s.sql);
    } catch (e) {
      c.problems.push(c.at(sKey, item, ['sql'], e instanceof Error ? e.message : String(e)));
      continue;
    }
    if (brands.length === 0) {
      if (!missing) c.warnings.push(c.at(sKey, item, ['sql'], 'not checked by the SQL guard: no brand it applies to has a dataset'));
      continue;
    }
    for (const b of brands) {
      c.guardChecks++;
      const verdict = await checkSql(fillTemplate(s.sql, { dataset: b.dataset, ...CHECK_WINDOW }), {
        // Catalog SQL names the contract's project, as callers do; BigQuery gets target.project at run time.
        project: CONTRACT_PROJECT,
        dataset: b.dataset,
      });
      if (!verdict.ok) {
        const line = verdict.position ? ['sql', verdict.position.line - 1] : ['sql'];
        c.problems.push(c.at(sKey, item, line, `on brand ${b.id} (dataset ${b.dataset}): ${guardMessage(verdict)}`));
        break;
      }
    }
  }
}

/** A saved query: its brand, no slots, the guard on the brand's dataset, and `tables` equal to what it reads. */
async function checkSavedQuery(c: Checking, q: Catalog['savedQueries'][number]): Promise<void> {
  const key = `saved:${q.id}`;
  const item = `saved query ${q.id}`;
  const brand = c.target.brands.find((b) => b.id === q.brandId);
  if (!brand) {
    c.problems.push(c.at(key, item, ['brand'], `brand ${q.brandId} does not exist`));
    return;
  }
  const slots = templateSlots(q.sql);
  if (slots.length > 0) {
    c.problems.push(
      c.at(
        key,
        item,
        ['sql'],
        `a saved query is concrete SQL and runs as written; it must not use slots (${slots.map((s) => `{${s}}`).join(', ')})`,
      ),
    );
    return;
  }
  if (!hasDataset(brand)) {
    c.problems.push(c.at(key, item, ['brand'], `brand ${q.brandId} has no dataset yet, so its saved queries cannot run`));
    return;
  }
  c.guardChecks++;
  const verdict = await checkSql(q.sql, { project: CONTRACT_PROJECT, dataset: brand.dataset });
  if (!verdict.ok) {
    c.problems.push(
      c.at(
        key,
        item,
        verdict.position ? ['sql', verdict.position.line - 1] : ['sql'],
        `on brand ${brand.id} (dataset ${brand.dataset}): ${guardMessage(verdict)}`,
      ),
    );
    return;
  }
  if (q.tables !== null) {
    const read = new Set(verdict.tables);
    const listed = new Set(q.tables);
    const extra = q.tables.filter((t) => !read.has(t));
    const unlisted = verdict.tables.filter((t) => !listed.has(t));
    if (extra.length > 0 || unlisted.length > 0) {
      const parts = [
        unlisted.length > 0 ? `reads ${unlisted.join(', ')} not listed` : '',
        extra.length > 0 ? `lists ${extra.join(', ')} it does not read` : '',
      ];
      c.problems.push(c.at(key, item, ['tables'], `tables must be the tables the SQL reads: it ${parts.filter(Boolean).join(' and ')}`));
    }
  }
}

/** A stored-query id names one section or one saved query: the folder's must not collide with kept rows of the other kind. */
function checkIdCollisions(c: Checking, catalog: Catalog, duplicates: ReadonlySet<string>): void {
  const folderSections = new Set(catalog.reports.flatMap((r) => r.sections.map((s) => s.id)));
  const folderSaved = new Set(catalog.savedQueries.map((q) => q.id));
  const folderReports = new Set(catalog.reports.map((r) => r.id));
  if (!c.target.prune) {
    for (const r of c.target.current.reports) {
      if (folderReports.has(r.id)) continue;
      for (const s of r.sections) {
        if (folderSaved.has(s.id) && !duplicates.has(s.id))
          c.problems.push(
            c.at(
              `saved:${s.id}`,
              `saved query ${s.id}`,
              ['id'],
              `id already names section ${s.id} of report ${r.id}, which the folder does not define (remove it with --prune, or ` +
                `choose another id)`,
            ),
          );
      }
    }
    for (const q of c.target.current.savedQueries) {
      // A saved query the folder defines twice (as a section too) was refused as a duplicate: it is defined.
      if (!folderSaved.has(q.id) && folderSections.has(q.id) && !duplicates.has(q.id)) {
        c.problems.push(
          c.at(
            `section:${q.id}`,
            `section ${q.id}`,
            ['id'],
            `id already names saved query ${q.id} of ${q.brandId}, which the folder does not define (remove it with --prune, or ` +
              `choose another id)`,
          ),
        );
      }
    }
  }
}

/** Memories: owners exist and stay, fields are valid, and no owner ends over the live-memory limit. */
function checkMemories(c: Checking, catalog: Catalog): void {
  const live = new Map<string, number>();
  const folderMemories = new Set(catalog.memories.map((m) => m.id));
  const count = (o: Owner) => live.set(ownerText(o), (live.get(ownerText(o)) ?? 0) + 1);
  for (const m of c.target.current.memories) if (!folderMemories.has(m.id) && !c.target.prune) count(m.owner);
  for (const m of catalog.memories) {
    const key = `memory:${m.id}`;
    const item = `memory ${m.id}`;
    const missing = ownerMissing(m.owner, c.target);
    if (missing) c.problems.push(c.at(key, item, ['owner'], missing));
    for (const [field, schema, value] of [
      ['title', TitleSchema, m.title],
      ['content', ContentSchema, m.content],
      ['table', TableNameSchema, m.table],
    ] as const) {
      if (value === null) continue;
      const parsed = schema.safeParse(value);
      if (!parsed.success) c.problems.push(c.at(key, item, [field], parsed.error.issues[0]?.message ?? `invalid ${field}`));
    }
    const stored = c.target.current.memories.find((c) => c.id === m.id);
    if (stored && ownerText(stored.owner) !== ownerText(m.owner)) {
      c.problems.push(
        c.at(key, item, ['owner'], `a memory's owner cannot change (stored: ${ownerText(stored.owner)}); give the new one another id`),
      );
    }
    count(m.owner);
  }
  for (const [owner, n] of live) {
    if (n > MEMORY_LIMITS.perOwner) {
      c.problems.push({
        file: 'memories/',
        item: `owner ${owner}`,
        message: `${n} live memories, more than the ${MEMORY_LIMITS.perOwner} an owner may have`,
      });
    }
  }
}
