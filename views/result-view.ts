import { type Row, type RunResult, RunResultSchema } from './lib/contract';
import { inferChart } from './lib/chart-data';
import { type Column, columnsOf, formatterFor } from './lib/format';
import { el, readResult, startView, type ViewHost } from './lib/host';
import { chartFigure } from './lib/svg-charts';
import { dataTable } from './lib/table';

// The run_query result view: the rows as a sortable table with their types, "N of M rows", "Load more" through
// the result cursor (run_query { cursor } called from the view), and a chart switch when the result is one date
// or category column with numeric columns.

const main = document.getElementById('app') ?? document.body;

interface State {
  rows: Row[];
  columns: Column[];
  first: RunResult;
  nextCursor: string | null;
  /** Rows in the whole result; null when the server does not say (no result cursors). */
  totalRows: number | null;
  chartOn: boolean;
}

/** The view's state for the current tool result (kept across re-renders): rows loaded so far, the next page. */
let state: State | undefined;

function stateFor(first: RunResult): State {
  if (state?.first === first) return state;
  state = {
    rows: first.rows,
    columns: columnsOf(first.rows, first.schema),
    first,
    nextCursor: first.nextCursor ?? null,
    totalRows: first.totalRows ?? (first.truncated ? null : first.rowCount),
    chartOn: false,
  };
  return state;
}

function render(first: RunResult, host: ViewHost) {
  const s = stateFor(first);
  const fmt = formatterFor(host.locale());
  const count = el('p', 'row-count');
  count.setAttribute('role', 'status');
  // A server without result cursors sends no totalRows: then say only that the result was cut, not a made-up total.
  const total = () =>
    s.totalRows !== null
      ? `${fmt.number(s.rows.length, 'INTEGER')} of ${fmt.number(s.totalRows, 'INTEGER')} row${s.totalRows === 1 ? '' : 's'}`
      : `${fmt.number(s.rows.length, 'INTEGER')} row${s.rows.length === 1 ? '' : 's'}${s.first.truncated ? ' (the result has more)' : ''}`;
  const countText = () =>
    total() +
    (s.first.window ? ` · ${fmt.date(s.first.window.startDate)} – ${fmt.date(s.first.window.endDate)}` : '') +
    (s.first.brandId ? ` · ${s.first.brandId}` : '');
  count.textContent = countText();

  const table = dataTable(s.columns, s.rows, fmt, 'Query result');
  const chartSlot = el('div', 'chart-slot');
  const toolbar = el('div', 'toolbar', count);

  const chart = () => inferChart(s.rows, s.columns, fmt);
  if (chart()) {
    const toggle = el('button', 'toggle', 'Chart');
    toggle.type = 'button';
    toggle.setAttribute('aria-pressed', String(s.chartOn));
    toggle.addEventListener('click', () => {
      s.chartOn = !s.chartOn;
      toggle.setAttribute('aria-pressed', String(s.chartOn));
      drawChart();
    });
    toolbar.append(toggle);
  }
  const drawChart = () => {
    const model = s.chartOn ? chart() : null;
    chartSlot.replaceChildren(...(model ? [chartFigure(model, fmt)] : []));
  };
  drawChart();

  const more = el('div', 'more');
  const moreStatus = el('p', 'more-status');
  moreStatus.setAttribute('role', 'status');
  const drawMore = () => {
    more.replaceChildren();
    if (s.nextCursor === null) {
      if (s.first.truncated && (s.totalRows === null || s.rows.length < s.totalRows))
        moreStatus.textContent = 'The rest of this result cannot be paged from here.';
      more.append(moreStatus);
      return;
    }
    if (!host.canCallTools()) {
      moreStatus.textContent = 'More rows: ask the assistant for the next page.';
      more.append(moreStatus);
      return;
    }
    const button = el('button', 'load-more', 'Load more');
    button.type = 'button';
    button.addEventListener('click', () => void loadMore(button));
    more.append(button, moreStatus);
  };

  async function loadMore(button: HTMLButtonElement) {
    if (s.nextCursor === null) return;
    button.disabled = true;
    moreStatus.textContent = 'Loading…';
    try {
      const result = await host.app.callServerTool({ name: 'run_query', arguments: { cursor: s.nextCursor } });
      const page = readResult(RunResultSchema, result);
      if (!page.ok) {
        moreStatus.textContent = page.message;
        button.disabled = false;
        return;
      }
      s.rows = [...s.rows, ...page.data.rows];
      s.nextCursor = page.data.nextCursor ?? null;
      s.totalRows = page.data.totalRows ?? s.totalRows;
      table.setRows(s.rows);
      count.textContent = countText();
      drawChart();
      moreStatus.textContent = `Loaded ${fmt.number(page.data.rows.length, 'INTEGER')} more rows.`;
      drawMore();
      // Keep keyboard focus where the person is: on the next "Load more", or on the table when there is none.
      const next = more.querySelector<HTMLButtonElement>('button');
      if (next) next.focus();
      else table.element.focus();
    } catch (err) {
      moreStatus.textContent = `Could not load more rows: ${err instanceof Error ? err.message : String(err)}`;
      button.disabled = false;
    }
  }
  drawMore();

  const body = s.rows.length === 0 ? el('p', 'empty', 'The query returned no rows.') : table.element;
  main.replaceChildren(toolbar, chartSlot, body, more);
}

startView('warehouse-result-view', RunResultSchema, render);
