import { ApiError, describeError } from '../../errors';
import { hasDataset } from '../../catalog/snapshot';
import { isTableName } from '../../catalog/table-name';
import { TtlCache } from '../../lib/ttl-cache';
import { listBrands } from '../brands/brands';
import type { OpContext } from '../../context';
import { getReport, listReportQueries, listReports, REPORTS_PAGE } from '../reports/reports';
import { runQuery } from '../query/run-query';
import { listSavedQueries } from '../saved-queries/saved-queries';
import type { Brand, Query } from '../../schemas/catalog';

/**
 * What ChatGPT's deep research and company knowledge (the `search` and `fetch` tools) can find: everything the
 * caller could list with the other tools, and nothing else, because every source reads through the same
 * operations (and so the same scoping) as REST.
 */
export interface KnowledgeItem {
  /** `<kind>:<brandId>:...`, what `fetch` takes back. */
  id: string;
  title: string;
  /** A stable link that identifies the item (the REST resource it comes from). */
  url: string;
  /** What a model needs to use the item. */
  text: string;
  metadata: Record<string, string>;
}

/** Brands whose table catalog one search reads at most (each cold read is a warehouse query). */
export const TABLE_CATALOG_BRANDS = 5;
/** How long a brand's table list is reused before the warehouse is asked again. */
const TABLE_CATALOG_TTL_MS = 10 * 60_000;

interface TableRow {
  table: string;
  layer: string;
  description: string;
}
const tableCatalogs = new TtlCache<TableRow[]>(256);

function link(origin: string, path: string, params: Record<string, string> = {}, hash?: string): string {
  const url = new URL(path, origin);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (hash !== undefined) url.hash = hash;
  return url.toString();
}

function brandItem(origin: string, b: Brand): KnowledgeItem {
  const dataset = b.dataset === null ? 'no dataset yet (cannot be queried)' : `tables are \`service-v1.${b.dataset}.<table>\``;
  return {
    id: `brand:${b.brandId}`,
    title: `Brand ${b.name ?? b.brandId}`,
    url: link(origin, '/v1/data/brands', {}, b.brandId),
    text: `Brand ${b.name ?? b.brandId} (brandId ${b.brandId}): ${dataset}; time zone ${b.timezone ?? 'UTC'}.`,
    metadata: { kind: 'brand', brandId: b.brandId },
  };
}

function queryText(q: Query): string {
  return [q.name, q.description, q.narrativeHints, q.parameterized ? `Parameters: ${q.parameters.join(', ')}` : null, `SQL:\n${q.sql}`]
    .filter((s): s is string => typeof s === 'string' && s.length > 0)
    .join('\n');
}

function sectionItem(origin: string, brandId: string, reportId: string, reportName: string, q: Query): KnowledgeItem {
  return {
    id: `section:${brandId}:${reportId}:${q.id}`,
    title: `${reportName}: ${q.name ?? q.id}`,
    url: link(origin, `/v1/data/reports/${reportId}/queries`, { brandId }, q.id),
    text: queryText(q),
    metadata: { kind: 'section', brandId, reportId, queryId: q.id },
  };
}

/** Every report the caller can list (one page of the largest size), with its sections. */
async function reportItems(ctx: OpContext, origin: string): Promise<KnowledgeItem[]> {
  const { reports } = await listReports(ctx, { limit: REPORTS_PAGE.max });
  const perReport = await Promise.all(
    reports.map(async (r) => {
      const { queries } = await listReportQueries(ctx, { reportId: r.reportId, brandId: r.brandId });
      const reportUrl = link(origin, `/v1/data/reports/${r.reportId}`, { brandId: r.brandId });
      const report: KnowledgeItem = {
        id: `report:${r.brandId}:${r.reportId}`,
        title: `Report ${r.name}`,
        url: reportUrl,
        text: [r.description, ...queries.map((q) => q.name)].filter(Boolean).join('\n'),
        metadata: { kind: 'report', brandId: r.brandId, reportId: r.reportId, type: r.type },
      };
      const sections = queries.map((q) => sectionItem(origin, r.brandId, r.reportId, r.name, q));
      return [report, ...sections];
    }),
  );
  return perReport.flat();
}

async function savedQueryItems(ctx: OpContext, origin: string): Promise<KnowledgeItem[]> {
  const { queries } = await listSavedQueries(ctx, {});
  return queries.map((q) => ({
    id: `saved:${q.id}`,
    title: `Saved query ${q.name ?? q.id}`,
    url: link(origin, '/v1/data/queries', {}, q.id),
    text: queryText(q),
    metadata: { kind: 'saved_query', queryId: q.id },
  }));
}

/**
 * A brand's `table_metadata`, read with run_query's own path (guard, audit, and the caller's usage budget: a
 * cold read is one run, documented in docs/mcp.md), then reused for TABLE_CATALOG_TTL_MS by every caller who
 * can see that brand.
 */
async function tableCatalog(ctx: OpContext, b: Brand & { dataset: string }): Promise<TableRow[]> {
  const cached = tableCatalogs.bound({ maxBytes: ctx.config.CACHE_MAX_BYTES }).get(b.dataset, ctx.now, TABLE_CATALOG_TTL_MS);
  if (cached) return cached;
  const sql = `SELECT table_name, layer, description FROM \`service-v1.${b.dataset}.table_metadata\` ORDER BY table_name`;
  const { result } = await runQuery(ctx, { sql, brandId: b.brandId }, { rowCap: 1000 });
  const rows = result.rows.flatMap((r) =>
    typeof r.table_name === 'string'
      ? [{ table: r.table_name, layer: String(r.layer ?? ''), description: String(r.description ?? '') }]
      : [],
  );
  tableCatalogs.set(b.dataset, rows, ctx.now);
  return rows;
}

function tableItem(origin: string, b: Brand & { dataset: string }, t: TableRow, columns?: string): KnowledgeItem {
  const fqn = `service-v1.${b.dataset}.${t.table}`;
  return {
    id: `table:${b.brandId}:${t.table}`,
    title: `Table ${fqn}`,
    url: link(origin, '/v1/data/query', { brandId: b.brandId }, fqn),
    text: [`\`${fqn}\` (${t.layer}): ${t.description}`, columns].filter(Boolean).join('\n'),
    metadata: { kind: 'table', brandId: b.brandId, dataset: b.dataset, table: t.table },
  };
}

async function tableItems(ctx: OpContext, origin: string, brands: Brand[]): Promise<KnowledgeItem[]> {
  const out: KnowledgeItem[] = [];
  for (const b of brands.filter(hasDataset).slice(0, TABLE_CATALOG_BRANDS)) {
    try {
      for (const t of await tableCatalog(ctx, b)) out.push(tableItem(origin, b, t));
    } catch (err) {
      // The catalog part of a search is best effort (the warehouse may be down or the budget spent); the rest
      // of the results stand, and the reason is logged with the request id.
      ctx.log.warn('search: table catalog unavailable', { brandId: b.brandId, internal: describeError(err) });
    }
  }
  return out;
}

/** Everything the caller can see, as search candidates. Memories join here once they exist (#14). */
export async function knowledgeItems(ctx: OpContext, origin: string): Promise<KnowledgeItem[]> {
  const { brands } = await listBrands(ctx);
  const [reports, saved, tables] = await Promise.all([
    reportItems(ctx, origin),
    savedQueryItems(ctx, origin),
    tableItems(ctx, origin, brands),
  ]);
  return [...brands.map((b) => brandItem(origin, b)), ...reports, ...saved, ...tables];
}

/** Items whose title or text holds every word of the query (case-insensitive), title hits first. */
export function searchItems(items: KnowledgeItem[], query: string, limit: number): KnowledgeItem[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const scored = items.flatMap((item) => {
    const title = item.title.toLowerCase();
    const all = `${title}\n${item.text.toLowerCase()}\n${item.id.toLowerCase()}`;
    if (!words.every((w) => all.includes(w))) return [];
    return [{ item, score: words.filter((w) => title.includes(w)).length }];
  });
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((s) => s.item);
}

const notFound = (id: string) =>
  new ApiError('NOT_FOUND', `no item ${JSON.stringify(id)} is visible to these credentials; use an id from search`);

/** One item by its search id, in full: a report with its instructions and sections' SQL, a table with its columns. */
export async function fetchItem(ctx: OpContext, origin: string, id: string): Promise<KnowledgeItem> {
  const [kind, ...rest] = id.split(':');
  const { brands } = await listBrands(ctx);
  const brand = (brandId: string | undefined) => brands.find((b) => b.brandId === brandId);
  switch (kind) {
    case 'brand': {
      const b = brand(rest[0]);
      if (!b || rest.length !== 1) throw notFound(id);
      return brandItem(origin, b);
    }
    case 'report':
    case 'section': {
      const [brandId, reportId, queryId] = rest;
      if (brandId === undefined || !brand(brandId) || !reportId || (kind === 'report') !== (queryId === undefined)) throw notFound(id);
      const input = { reportId, brandId };
      const [detail, { queries }] = await Promise.all([getReport(ctx, input), listReportQueries(ctx, input)]);
      if (kind === 'section') {
        const q = queries.find((x) => x.id === queryId);
        if (!q) throw notFound(id);
        return sectionItem(origin, brandId, reportId, detail.name, q);
      }
      return {
        id,
        title: `Report ${detail.name}`,
        url: link(origin, `/v1/data/reports/${reportId}`, { brandId }),
        text: [
          detail.description,
          detail.instructions ? `Instructions:\n${detail.instructions}` : null,
          ...queries.map((q) => `## Section ${q.id}\n${queryText(q)}`),
        ]
          .filter(Boolean)
          .join('\n\n'),
        metadata: { kind: 'report', brandId, reportId, type: detail.type },
      };
    }
    case 'saved': {
      const found = (await savedQueryItems(ctx, origin)).find((i) => i.id === id);
      if (!found) throw notFound(id);
      return found;
    }
    case 'table': {
      const [brandId, table] = rest;
      const b = brand(brandId);
      if (!b || !hasDataset(b) || table === undefined || !isTableName(table) || rest.length !== 2) throw notFound(id);
      const row = (await tableCatalog(ctx, b)).find((t) => t.table === table);
      if (!row) throw notFound(id);
      const sql =
        `SELECT column_name, data_type FROM \`service-v1.${b.dataset}.INFORMATION_SCHEMA.COLUMNS\` ` +
        `WHERE table_name = '${table}' ORDER BY ordinal_position`;
      const { result } = await runQuery(ctx, { sql, brandId: b.brandId }, { rowCap: 1000 });
      const columns = result.rows.map((r) => `- ${String(r.column_name)} ${String(r.data_type)}`).join('\n');
      return tableItem(origin, b, row, `Columns:\n${columns}`);
    }
    default:
      throw notFound(id);
  }
}
