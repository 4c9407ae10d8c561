import { ApiError, describeError } from '../../errors';
import { hasDataset } from '../../catalog/snapshot';
import { isTableName } from '../../catalog/table-name';
import { listBrands } from '../brands/brands';
import type { OpContext } from '../../context';
import { getReport, listReportQueries, listReports, REPORTS_PAGE } from '../reports/reports';
import { listSavedQueries } from '../saved-queries/saved-queries';
import { getMemory, listMemories } from '../memories/memories';
import { MEMORIES_PAGE } from '../memories/rules';
import { modelMemory, type Memory } from '../memories/memories.schemas';
import { listTableColumns, listTables } from '../tables/list-tables';
import { describeTableForModel } from '../tables/tables.tools';
import { isFamilyName } from '../tables/tables.schemas';
import type { Brand, Query, Report } from '../../schemas/catalog';
import { matchDocument, queryWords, unmatchedWords } from './match';
import { consoleLink } from '../../web/console-link';

/**
 * What ChatGPT's deep research and company knowledge (the `search` and `fetch` tools) can find: everything the
 * caller could list with the other tools, and nothing else, because every source reads through the same
 * operations (and so the same scoping) as REST. Only brands with data count: a brand without a dataset, its
 * reports, saved queries and memories are not results. Nothing here spends a run: tables come from BigQuery's table
 * metadata (describe_table's operation and caches), the rest from D1 and the catalog snapshot.
 */
export interface KnowledgeItem {
  /** `<kind>:...`, readable (`report:rpt_business_overview`, `table:brand_acme:fact__orders`); what `fetch` takes. */
  id: string;
  title: string;
  /** What search matches (fetch: the item in full). */
  text: string;
  /** The part of `text` a search snippet may quote (its description in words, not SQL or a list of other items). */
  quote?: string;
  metadata: Record<string, string>;
}

/**
 * An item as search and fetch give it, with `url`: its console page (`itemUrl`), what `fetch` gives, for a person
 * signed in as an administrator who can reach it. A person opening an assistant's citation cannot use the
 * assistant's API key or token, but can sign in.
 */
export type FetchedItem = KnowledgeItem & { url: string };

/** Brands whose tables one search indexes at most (the caller's first ones with data, by id). */
export const TABLE_INDEX_BRANDS = 5;
/** Pages of listReports one search reads at most (REPORTS_PAGE.max rows each: a report once per brand). */
const REPORT_PAGES = 5;

type DataBrand = Brand & { dataset: string };

/** The console's search page (search.page.tsx); `<SEARCH_PAGE>/<id>` shows one item. */
export const SEARCH_PAGE = '/admin/search';

/** The path of the console page that shows an item (search.page.tsx); ids are `[A-Za-z0-9_:-]`, `:` kept readable. */
export function itemPath(id: string): string {
  return `${SEARCH_PAGE}/${encodeURIComponent(id).replaceAll('%3A', ':')}`;
}

/** The item's `url`: its console page on the configured console origin (never the request's: console-link.ts). */
function itemUrl(ctx: OpContext, id: string): string {
  return consoleLink(ctx.env, itemPath(id));
}

const nameOf = (b: Brand) => b.name ?? b.brandId;

/** The caller's brands that have data (a provisioned dataset), by id. */
async function dataBrands(ctx: OpContext): Promise<DataBrand[]> {
  return (await listBrands(ctx)).brands.filter(hasDataset);
}

function brandItem(b: DataBrand, tables: string[]): KnowledgeItem {
  const about =
    `Brand ${nameOf(b)} (brandId ${b.brandId}): tables are \`service-v1.${b.dataset}.<table>\`; ` + `time zone ${b.timezone ?? 'UTC'}.`;
  return {
    id: `brand:${b.brandId}`,
    title: `Brand ${nameOf(b)}`,
    // The table names are found through the brand, but a snippet quotes the brand, not one of its tables.
    text: [about, ...tables].join('\n'),
    quote: about,
    metadata: { kind: 'brand', brandId: b.brandId, dataset: b.dataset },
  };
}

/** What a stored query is for, in words: its name, description, reading hints and parameters (no SQL). */
function queryProse(q: Query): string {
  return [
    q.name,
    q.description,
    q.narrativeHints ? `How to read it: ${q.narrativeHints}` : null,
    q.parameters.length > 0 ? `Parameters: ${q.parameters.join(', ')}` : null,
  ]
    .filter((s): s is string => typeof s === 'string' && s.length > 0)
    .join('\n');
}

function queryText(q: Query): string {
  return `${queryProse(q)}\nSQL:\n${q.sql}`;
}

/** One org or system report, once, with the caller's brands with data it applies to. */
interface ReportGroup {
  reportId: string;
  name: string;
  type: Report['type'];
  description: string | null;
  brands: DataBrand[];
}

/** Every report the caller can list for a brand with data, once each (the listing has one row per brand). */
async function reportGroups(ctx: OpContext, brands: DataBrand[]): Promise<ReportGroup[]> {
  const byId = new Map(brands.map((b) => [b.brandId, b]));
  const groups = new Map<string, ReportGroup>();
  let cursor: string | undefined;
  for (let page = 0; page < REPORT_PAGES; page++) {
    const { reports, nextCursor } = await listReports(ctx, { limit: REPORTS_PAGE.max, cursor });
    for (const r of reports) {
      const brand = byId.get(r.brandId);
      if (!brand || !r.runnable) continue;
      const g = groups.get(r.reportId) ?? { reportId: r.reportId, name: r.name, type: r.type, description: r.description, brands: [] };
      g.brands.push(brand);
      groups.set(r.reportId, g);
    }
    if (nextCursor === null) break;
    if (page === REPORT_PAGES - 1) ctx.log.warn('search: report listing cut', { pages: REPORT_PAGES });
    cursor = nextCursor;
  }
  return [...groups.values()];
}

function forBrands(g: ReportGroup): string {
  return `${g.type} report for ${g.brands.map(nameOf).join(', ')}`;
}

/** The report read through its first brand (sections and instructions do not differ by brand, only the data). */
async function reportDetail(ctx: OpContext, g: ReportGroup) {
  const input = { reportId: g.reportId, brandId: g.brands[0]!.brandId };
  const [detail, { queries }] = await Promise.all([getReport(ctx, input), listReportQueries(ctx, input)]);
  return { detail, queries };
}

function sectionItem(g: ReportGroup, q: Query): KnowledgeItem {
  return {
    id: `section:${g.reportId}:${q.id}`,
    title: `${g.name}: ${q.name ?? q.id}`,
    text: `${queryText(q)}\nSection of ${g.name}, a ${forBrands(g)}.`,
    // A match in the SQL ("ORDER BY revenue") is quoted as what the section is, not as code.
    quote: `${queryProse(q)}\nSection of ${g.name}, a ${forBrands(g)}.`,
    metadata: { kind: 'section', reportId: g.reportId, queryId: q.id, brandIds: g.brands.map((b) => b.brandId).join(',') },
  };
}

/** A report's items: the report (matched on what it is for, not its SQL) and each section. */
async function reportItems(ctx: OpContext, brands: DataBrand[]): Promise<KnowledgeItem[]> {
  const groups = await reportGroups(ctx, brands);
  const perReport = await Promise.all(
    groups.map(async (g) => {
      const { detail, queries } = await reportDetail(ctx, g);
      const report: KnowledgeItem = {
        id: `report:${g.reportId}`,
        title: `Report ${g.name}`,
        text: [
          g.description,
          `A ${forBrands(g)}, ${queries.length} sections.`,
          detail.instructions,
          ...queries.map((q) => [q.name, q.description].filter(Boolean).join(': ')),
        ]
          .filter(Boolean)
          .join('\n'),
        metadata: reportMetadata(g),
      };
      return [report, ...queries.map((q) => sectionItem(g, q))];
    }),
  );
  return perReport.flat();
}

function reportMetadata(g: ReportGroup): Record<string, string> {
  return { kind: 'report', reportId: g.reportId, type: g.type, brandIds: g.brands.map((b) => b.brandId).join(',') };
}

async function savedQueryItems(ctx: OpContext, brands: DataBrand[]): Promise<KnowledgeItem[]> {
  const byId = new Map(brands.map((b) => [b.brandId, b]));
  const { queries } = await listSavedQueries(ctx, {});
  return queries.flatMap((q) => {
    const brand = q.brandId === undefined ? undefined : byId.get(q.brandId);
    if (!brand) return [];
    return [
      {
        id: `saved:${q.id}`,
        title: `Saved query ${q.name ?? q.id} (${nameOf(brand)})`,
        text: queryText(q),
        quote: queryProse(q),
        metadata: { kind: 'saved_query', queryId: q.id, brandId: brand.brandId },
      },
    ];
  });
}

function memoryItem(m: Memory, brand: Brand | undefined): KnowledgeItem {
  const owner = m.scope === 'brand' ? `${nameOf(brand ?? { brandId: m.brandId ?? '', name: null, dataset: null })}'s` : m.scope;
  // Who and when, as list_memories gives them (display names, the day): what a citation of the memory says.
  const { by, date } = modelMemory(m);
  return {
    id: `memory:${m.memoryId}`,
    title: `Memory: ${m.title}`,
    text: [`A ${owner} memory${m.table ? ` about table ${m.table}` : ''}.`, m.content].join('\n'),
    metadata: {
      kind: 'memory',
      memoryId: m.memoryId,
      scope: m.scope,
      ...(m.brandId ? { brandId: m.brandId } : {}),
      ...(m.table ? { table: m.table } : {}),
      by,
      date,
    },
  };
}

/** Memories the caller can read (one page of the largest size), each once, except brand ones of brands without data. */
async function memoryItems(ctx: OpContext, brands: DataBrand[]): Promise<KnowledgeItem[]> {
  const byId = new Map(brands.map((b) => [b.brandId, b]));
  const { memories } = await listMemories(ctx, { limit: MEMORIES_PAGE.max });
  return memories.filter((m) => m.brandId === null || byId.has(m.brandId)).map((m) => memoryItem(m, byId.get(m.brandId ?? '')));
}

type IndexedTable = Awaited<ReturnType<typeof listTableColumns>>['tables'][number];

function tableTitle(b: DataBrand, table: string): string {
  return `Table service-v1.${b.dataset}.${table} (${nameOf(b)})`;
}

function tableItem(b: DataBrand, t: IndexedTable, memories: Memory[]): KnowledgeItem {
  const columnLine = (c: IndexedTable['columns'][number]): string =>
    `Column ${c.name} ${c.type}${c.description ? `: ${c.description}` : ''}`;
  return {
    id: `table:${b.brandId}:${t.table}`,
    title: tableTitle(b, t.table),
    text: [
      `${t.sqlName}${t.layer ? ` (${t.layer})` : ''} of ${nameOf(b)}: ${t.description ?? 'no description'}`,
      t.shards ? `${t.shards.count} date shards, ${t.shards.first} to ${t.shards.last}; columns of the latest.` : null,
      t.coverage ? `Data from ${t.coverage.firstDay} to ${t.coverage.lastDay}.` : null,
      ...t.columns.map(columnLine),
      ...memories.filter((m) => m.table === t.table).map((m) => `Memory "${m.title}": ${m.content}`),
    ]
      .filter(Boolean)
      .join('\n'),
    metadata: { kind: 'table', brandId: b.brandId, dataset: b.dataset, table: t.table },
  };
}

/**
 * The tables of the caller's first TABLE_INDEX_BRANDS brands with data: columns and descriptions from table metadata
 * (cached per dataset, no run), and the memories that apply to each brand. Best effort: a brand whose tables cannot
 * be read is logged with the request id and left out; the rest of the results stand.
 */
async function tableItems(ctx: OpContext, brands: DataBrand[]): Promise<KnowledgeItem[]> {
  const perBrand = await Promise.all(
    brands.slice(0, TABLE_INDEX_BRANDS).map(async (b) => {
      try {
        const [{ tables }, { memories }] = await Promise.all([
          listTableColumns(ctx, { brandId: b.brandId }),
          listMemories(ctx, { brandId: b.brandId, limit: MEMORIES_PAGE.max }),
        ]);
        return { b, items: tables.map((t) => tableItem(b, t, memories)) };
      } catch (err) {
        ctx.log.warn('search: tables unavailable', { brandId: b.brandId, internal: describeError(err) });
        return { b, items: [] };
      }
    }),
  );
  return perBrand.flatMap(({ b, items }) => [
    brandItem(
      b,
      items.map((i) => i.title),
    ),
    ...items,
  ]);
}

/** Everything the caller can see, as search candidates. */
async function knowledgeItems(ctx: OpContext): Promise<KnowledgeItem[]> {
  const brands = await dataBrands(ctx);
  const [tables, reports, saved, memories] = await Promise.all([
    tableItems(ctx, brands),
    reportItems(ctx, brands),
    savedQueryItems(ctx, brands),
    memoryItems(ctx, brands),
  ]);
  const indexed = new Set(tables.map((t) => t.id));
  // Brands beyond TABLE_INDEX_BRANDS are still found by name.
  const others = brands.filter((b) => !indexed.has(`brand:${b.brandId}`)).map((b) => brandItem(b, []));
  return [...tables, ...others, ...reports, ...saved, ...memories];
}

/** A search's answer: the results, and when there are none, which of the query's words nothing matched. */
export interface SearchAnswer {
  results: SearchResult[];
  /** The query's words no item mentions (by themselves or through a synonym); empty when each matched something. */
  unmatched: string[];
}

export interface SearchResult {
  id: string;
  title: string;
  url: string;
  /** The matched text around the query's words. */
  text: string;
}

/**
 * The best `limit` items for the query (match.ts): only items that match every word, the query as a phrase and
 * whole words in the title first. No result when no item matches them all, with the words nothing matched at all.
 */
export async function searchItems(ctx: OpContext, query: string, limit: number): Promise<SearchAnswer> {
  const words = queryWords(query);
  if (words.length === 0) return { results: [], unmatched: [] };
  const items = await knowledgeItems(ctx);
  const scored = items.flatMap((item, order) => {
    const { score, snippet } = matchDocument(item, words);
    return score > 0 ? [{ item, score, order, snippet }] : [];
  });
  const results = scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map(({ item, snippet }) => ({ id: item.id, title: item.title, url: itemUrl(ctx, item.id), text: snippet }));
  return { results, unmatched: results.length > 0 ? [] : unmatchedWords(items, words) };
}

/** The results alone (the console's search page). */
export async function search(ctx: OpContext, query: string, limit: number): Promise<SearchResult[]> {
  return (await searchItems(ctx, query, limit)).results;
}

const notFound = (id: string) =>
  new ApiError('NOT_FOUND', `no item ${JSON.stringify(id)} is visible to these credentials; use an id from search`);

async function fetchReport(ctx: OpContext, id: string, reportId: string, queryId: string | undefined) {
  const g = (await reportGroups(ctx, await dataBrands(ctx))).find((x) => x.reportId === reportId);
  if (!g) throw notFound(id);
  const { detail, queries } = await reportDetail(ctx, g);
  if (queryId !== undefined) {
    const q = queries.find((x) => x.id === queryId);
    if (!q) throw notFound(id);
    return sectionItem(g, q);
  }
  return {
    id,
    title: `Report ${g.name}`,
    text: [
      g.description,
      `A ${forBrands(g)} (brandIds ${g.brands.map((b) => b.brandId).join(', ')}); ` +
        'run a section with run_query { queryId, brandId, period }.',
      detail.instructions ? `Instructions:\n${detail.instructions}` : null,
      ...queries.map((q, i) => `## Section ${i + 1}: ${q.name ?? q.id} (queryId ${q.id})\n${queryText(q)}`),
    ]
      .filter(Boolean)
      .join('\n\n'),
    metadata: reportMetadata(g),
  };
}

/** One item by its search id, in full: a report with its instructions and sections, a table as describe_table gives it. */
export async function fetchItem(ctx: OpContext, id: string): Promise<FetchedItem> {
  return { ...(await findItem(ctx, id)), url: itemUrl(ctx, id) };
}

/** The item `fetch` gives for `id`, without its url (the console page that shows it needs none). */
export async function findItem(ctx: OpContext, id: string): Promise<KnowledgeItem> {
  const colon = id.indexOf(':');
  const kind = colon < 0 ? id : id.slice(0, colon);
  const rest = colon < 0 ? [] : id.slice(colon + 1).split(':');
  const brand = async (brandId: string | undefined) => (await dataBrands(ctx)).find((b) => b.brandId === brandId);
  switch (kind) {
    case 'brand': {
      const b = await brand(rest[0]);
      if (!b || rest.length !== 1) throw notFound(id);
      const { tables } = await listTables(ctx, { brandId: b.brandId });
      const lines = tables.map(
        (t) => `- ${t.table}${t.layer ? ` (${t.layer})` : ''}: ${t.description ?? ''}${t.rowCount === null ? '' : ` ${t.rowCount} rows`}`,
      );
      const item = brandItem(b, []);
      return {
        ...item,
        text: `${item.text}\nTables (describe_table or fetch table:${b.brandId}:<table> for columns):\n${lines.join('\n')}`,
      };
    }
    case 'report':
    case 'section': {
      const [reportId, queryId, ...extra] = rest;
      if (!reportId || extra.length > 0 || (kind === 'report') !== (queryId === undefined)) throw notFound(id);
      return fetchReport(ctx, id, reportId, queryId);
    }
    case 'saved': {
      const found = (await savedQueryItems(ctx, await dataBrands(ctx))).find((i) => i.id === id);
      if (!found) throw notFound(id);
      return found;
    }
    case 'memory': {
      if (rest.length !== 1 || !rest[0]) throw notFound(id);
      const brands = await dataBrands(ctx);
      const m = await getMemory(ctx, { memoryId: rest[0] }).catch((err: unknown) => {
        throw err instanceof ApiError && err.code === 'MEMORY_NOT_FOUND' ? notFound(id) : err;
      });
      if (m.brandId !== null && !brands.some((b) => b.brandId === m.brandId)) throw notFound(id);
      return memoryItem(
        m,
        brands.find((b) => b.brandId === m.brandId),
      );
    }
    case 'table': {
      const [brandId, table] = rest;
      const b = await brand(brandId);
      if (!b || table === undefined || !(isTableName(table) || isFamilyName(table)) || rest.length !== 2) throw notFound(id);
      const described = await describeTableForModel(ctx, { brandId: b.brandId, table });
      return {
        id,
        title: tableTitle(b, table),
        text: JSON.stringify(described),
        metadata: { kind: 'table', brandId: b.brandId, dataset: b.dataset, table },
      };
    }
    default:
      throw notFound(id);
  }
}
