import type { Row } from './contract';
import { type Column, type Formatter, labelOf, type SortDirection, sortRows } from './format';

// A data table: one header button per column (click or Enter/Space to sort; aria-sort says the order), numbers
// right-aligned and formatted, dates as dates, nulls shown as a muted "null". The table scrolls sideways inside
// its own focusable box, so a wide result never widens the page on a phone.

export interface DataTable {
  element: HTMLElement;
  /** Replaces the rows (keeps the current sort). */
  setRows(rows: readonly Row[]): void;
}

export function dataTable(columns: readonly Column[], initial: readonly Row[], fmt: Formatter, caption: string): DataTable {
  let rows: readonly Row[] = initial;
  let sort: { column: Column; direction: SortDirection } | null = null;

  const scroller = document.createElement('div');
  scroller.className = 'table-scroll';
  scroller.tabIndex = 0;
  scroller.setAttribute('role', 'region');
  scroller.setAttribute('aria-label', caption);
  const table = document.createElement('table');
  const cap = document.createElement('caption');
  cap.className = 'visually-hidden';
  cap.textContent = caption;
  const thead = document.createElement('thead');
  const headRow = document.createElement('tr');
  const tbody = document.createElement('tbody');
  table.append(cap, thead, tbody);
  thead.append(headRow);
  scroller.append(table);

  const headers = columns.map((column) => {
    const th = document.createElement('th');
    th.scope = 'col';
    th.className = `k-${column.kind}`;
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'sort';
    button.title = `${column.name} (${column.type}); sort`;
    const name = document.createElement('span');
    name.textContent = labelOf(column.name);
    const arrow = document.createElement('span');
    arrow.className = 'sort-arrow';
    arrow.setAttribute('aria-hidden', 'true');
    button.append(name, arrow);
    button.addEventListener('click', () => {
      // Numbers and dates start with the largest/latest first: that is what people look for.
      const first: SortDirection = column.kind === 'text' || column.kind === 'bool' ? 'ascending' : 'descending';
      const direction: SortDirection = sort?.column === column ? (sort.direction === 'ascending' ? 'descending' : 'ascending') : first;
      sort = { column, direction };
      render();
    });
    th.append(button);
    headRow.append(th);
    return { th, arrow, column };
  });

  function render() {
    for (const h of headers) {
      const active = sort?.column === h.column;
      if (active && sort) h.th.setAttribute('aria-sort', sort.direction);
      else h.th.removeAttribute('aria-sort');
      h.arrow.textContent = active ? (sort?.direction === 'ascending' ? '▲' : '▼') : '';
    }
    const shown = sort ? sortRows(rows, sort.column, sort.direction) : rows;
    const body = document.createDocumentFragment();
    for (const row of shown) {
      const tr = document.createElement('tr');
      for (const column of columns) {
        const td = document.createElement('td');
        const v = row[column.name];
        td.className = `k-${column.kind}`;
        if (v === null || v === undefined) {
          td.classList.add('null');
          td.textContent = 'null';
        } else {
          td.textContent = fmt.cell(v, column);
          if (column.kind === 'date' || column.kind === 'timestamp') td.title = String(v);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    tbody.replaceChildren(body);
  }

  render();
  return {
    element: scroller,
    setRows(next) {
      rows = next;
      render();
    },
  };
}
