import { DashboardConfigSchema, type ReportResult, ReportResultSchema, type ReportSection, type Tile } from './lib/contract';
import { chartFromSpec, inferChart } from './lib/chart-data';
import { columnsOf, type Formatter, formatterFor, labelOf } from './lib/format';
import { el, startView, type ViewHost } from './lib/host';
import { renderMarkdown } from './lib/markdown';
import { chartFigure } from './lib/svg-charts';
import { dataTable } from './lib/table';

// The show_report view: the report's dashboardConfig tiles in their order (KPI, chart, table), each chart drawn
// from its section's rows as its chartSpec says, the report's instructions and the date window the sections ran
// with. A report without a dashboardConfig shows every section in order (its chartSpec's chart, else a table).

const main = document.getElementById('app') ?? document.body;

/** The tiles to draw: the dashboardConfig's, or one per section when there is none (or it cannot be read). */
function tilesOf(r: ReportResult): Tile[] {
  const config = DashboardConfigSchema.safeParse(r.report.dashboardConfig);
  if (config.success && config.data.tiles.length > 0) return config.data.tiles;
  return r.sections.map((s) => ({ queryId: s.id, kind: s.chartSpec ? 'chart' : 'table' }));
}

function kpis(section: ReportSection, fmt: Formatter): HTMLElement | null {
  const rows = section.rows ?? [];
  const row = rows[0];
  if (rows.length !== 1 || !row) return null;
  const list = el('dl', 'kpis');
  for (const column of columnsOf(rows, section.schema)) {
    const v = row[column.name];
    const value = el('dd', v === null || v === undefined ? 'null' : undefined, fmt.cell(v, column));
    list.append(el('div', 'kpi', el('dt', undefined, labelOf(column.name)), value));
  }
  return list;
}

function tileBody(tile: Tile, section: ReportSection, fmt: Formatter): HTMLElement[] {
  if (section.error) {
    const { code, message, requestId } = section.error;
    return [el('p', 'error', `${code}: ${message}${requestId ? ` (request ${requestId})` : ''}`)];
  }
  const rows = section.rows ?? [];
  if (rows.length === 0) return [el('p', 'empty', 'No rows for this window.')];
  const columns = columnsOf(rows, section.schema);
  const parts: HTMLElement[] = [];
  if (tile.kind === 'kpi') {
    const k = kpis(section, fmt);
    if (k) return [k];
  }
  const table = () => dataTable(columns, rows, fmt, section.name ?? section.id).element;
  if (tile.kind === 'chart') {
    const model = chartFromSpec(section.chartSpec, rows, columns, fmt) ?? inferChart(rows, columns, fmt);
    if (model) parts.push(chartFigure(model, fmt));
    else parts.push(el('p', 'note', 'These columns have no chart; the rows are below.'), table());
  } else {
    parts.push(table());
  }
  const total = section.totalRows ?? rows.length;
  if (section.truncated || total > rows.length) {
    parts.push(el('p', 'note', `Showing ${fmt.number(rows.length, 'INTEGER')} of ${fmt.number(total, 'INTEGER')} rows.`));
  }
  return parts;
}

function render(r: ReportResult, host: ViewHost) {
  const fmt = formatterFor(host.locale());
  const header = el('header', 'report-header', el('h1', undefined, r.report.name));
  if (r.report.description) header.append(el('p', 'description', r.report.description));
  const facts: string[] = [];
  if (r.window) {
    const w = r.window;
    const detail = [w.cadence, w.timezone].filter((x): x is string => Boolean(x)).join(', ');
    facts.push(`Window: ${fmt.date(w.startDate)} – ${fmt.date(w.endDate)}${detail ? ` (${detail})` : ''}`);
  }
  if (r.brandId) facts.push(`Brand: ${r.brandId}`);
  if (facts.length > 0) header.append(el('p', 'window', facts.join(' · ')));

  const parts: HTMLElement[] = [header];
  if (r.report.instructions) {
    const details = el('details', 'instructions-box', el('summary', undefined, 'Instructions'), renderMarkdown(r.report.instructions));
    details.open = true;
    parts.push(details);
  }

  const config = DashboardConfigSchema.safeParse(r.report.dashboardConfig);
  const columns = config.success ? (config.data.columns ?? 1) : 1;
  const grid = el('div', 'tiles');
  grid.style.setProperty('--columns', String(columns));
  const byId = new Map(r.sections.map((s) => [s.id, s]));
  for (const tile of tilesOf(r)) {
    const section = byId.get(tile.queryId);
    const heading = el('h2', undefined, section?.name ?? tile.queryId);
    const box = el('section', `tile tile-${tile.kind}`, heading);
    box.dataset.queryId = tile.queryId;
    heading.id = `tile-${tile.queryId}`;
    box.setAttribute('aria-labelledby', heading.id);
    if (tile.span && tile.span > 1) box.style.setProperty('--span', String(Math.min(tile.span, columns)));
    if (!section) {
      box.append(el('p', 'error', 'This tile names a section the report does not have.'));
    } else {
      if (section.description) box.append(el('p', 'description', section.description));
      box.append(...tileBody(tile, section, fmt));
    }
    grid.append(box);
  }
  parts.push(grid);
  main.replaceChildren(...parts);
}

startView('warehouse-report-view', ReportResultSchema, render);
