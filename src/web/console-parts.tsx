import type { Child, FC } from 'hono/jsx';

/**
 * What the console's list pages (history, inbox, long queries, keys, memories) share: their stylesheet additions, the
 * filter form (a GET form, so a filtered view is a link to keep or send), the list card and keyset paging.
 */

const CSS = `
form.filters .grid{grid-template-columns:repeat(auto-fill,minmax(11rem,1fr))}
form.filters label{margin-top:.25rem}
table.compact td,table.compact th{padding:.35rem .5rem}
pre.sql{white-space:pre-wrap;word-break:break-word;margin:.25rem 0;padding:.35rem .5rem;background:var(--bg);border:1px solid var(--line);
 border-radius:6px;font-size:.85rem;max-height:12rem;overflow:auto}
.said{white-space:pre-wrap;word-break:break-word}
.error-message{font-size:.85rem;word-break:break-word;max-width:24rem}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.35rem 1rem;margin:0}
dl.facts dt{font-weight:600;color:var(--muted)}
dl.facts dd{margin:0}
ol.conversation{list-style:none;padding:0;margin:0;display:flex;flex-direction:column;gap:.5rem}
ol.conversation li{max-width:85%;border:1px solid var(--line);border-radius:10px;padding:.5rem .75rem;background:var(--bg)}
ol.conversation li.turn-user{align-self:flex-end;border-color:var(--accent)}
ol.conversation li.turn-tool{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}
ol.conversation .who{display:block;font-weight:600;font-size:.85rem;color:var(--muted)}
.sev-high{color:var(--danger);font-weight:600}
.st{font-weight:600}
.st-open{color:var(--danger)}
.st-resolved{color:var(--ok)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
textarea{width:100%;min-height:5rem;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);
 border-radius:6px}
textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
textarea[aria-invalid="true"]{border-color:var(--danger);border-width:2px}
ol.history{padding-left:1.2rem;margin:.75rem 0 0}
span.blocked,span.st{overflow-wrap:normal}
@media (min-width:720px){
 td[data-label="Caller"],td[data-label="Filed by"]{min-width:10rem}
 td[data-label="Query"],td[data-label="Report"]{min-width:16rem}
}
@media (max-width:719px){.num{text-align:left}dl.facts{grid-template-columns:1fr}}
`;

export const ConsoleCss: FC<{ nonce: string }> = ({ nonce }) => <style nonce={nonce} dangerouslySetInnerHTML={{ __html: CSS }} />;

export interface FilterField {
  name: string;
  label: string;
  /** A select with "Any" first; else a text (or `type`) input. */
  options?: { value: string; label: string }[];
  type?: 'date' | 'text';
  placeholder?: string;
}

/**
 * A GET form of filters, filled with the current values; an invalid value is named in an alert. `keep` are values
 * the form carries unchanged (e.g. which tab is shown); Clear keeps them too.
 */
export const FilterForm: FC<{
  action: string;
  fields: FilterField[];
  values: Record<string, string>;
  error?: string;
  keep?: Record<string, string>;
}> = ({ action, fields, values, error, keep = {} }) => (
  <section class="card" aria-labelledby="filters-heading">
    <h2 id="filters-heading">Filters</h2>
    {error ? (
      <p class="alert" role="alert">
        Not filtered: {error}.
      </p>
    ) : null}
    <form method="get" action={action} class="filters">
      {Object.entries(keep).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <div class="grid">
        {fields.map((f) => (
          <div>
            <label for={`filter-${f.name}`}>{f.label}</label>
            {f.options ? (
              <select id={`filter-${f.name}`} name={f.name}>
                <option value="">Any</option>
                {f.options.map((o) => (
                  <option value={o.value} selected={values[f.name] === o.value}>
                    {o.label}
                  </option>
                ))}
                {values[f.name] && !f.options.some((o) => o.value === values[f.name]) ? (
                  <option value={values[f.name]} selected>
                    {values[f.name]}
                  </option>
                ) : null}
              </select>
            ) : (
              <input
                id={`filter-${f.name}`}
                name={f.name}
                type={f.type ?? 'text'}
                value={values[f.name] ?? ''}
                placeholder={f.placeholder}
              />
            )}
          </div>
        ))}
      </div>
      <div class="actions">
        <button type="submit">Filter</button>
        <a class="button secondary" href={Object.keys(keep).length ? `${action}?${new URLSearchParams(keep)}` : action}>
          Clear
        </a>
      </div>
    </form>
  </section>
);

/** The current filters (without the page cursor) with `extra`, as a query string. */
export function filterQuery(values: Record<string, string>, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (k !== 'before' && v !== '') q.set(k, v);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return q.toString();
}

const Pager: FC<{ href: string | null; label: string }> = ({ href, label }) =>
  href ? (
    <p>
      <a href={href}>{label} →</a>
    </p>
  ) : null;

/**
 * One page of a keyset-paged list read with one row more than it shows: the rows to show, and the cursor
 * (`<createdAt>:<id>` of the last shown row, the lists' `before` filter) when there are more.
 */
export function listPage<T extends { createdAt: number; id: string }>(rows: T[], size: number): { shown: T[]; next: string | null } {
  const shown = rows.slice(0, size);
  const last = shown.at(-1);
  return { shown, next: rows.length > size && last ? `${last.createdAt}:${last.id}` : null };
}

export interface ListColumn {
  label: string;
  /** A number column: right-aligned on a wide screen. */
  num?: boolean;
}

/**
 * The console's list card, the one shape of history, inbox, long queries and keys: a heading, what comes before
 * the table (a CSV link, the retention window), the table (caption, column headings, the rows the page renders,
 * each cell with its `data-label` for the phone's cards) or a line saying there is nothing, and the link to the
 * next page of a keyset-paged list. A page with filters puts a FilterForm above it.
 */
export const ListCard: FC<{
  /** Prefix of the heading's id (`<id>-heading`). */
  id: string;
  title: Child;
  before?: Child;
  caption?: Child;
  columns: ListColumn[];
  /** How many rows `children` holds (0: `empty` is shown instead of the table). */
  count: number;
  empty: string;
  tableClass?: string;
  pager?: { href: string | null; label: string };
  children?: Child;
}> = ({ id, title, before, caption, columns, count, empty, tableClass, pager, children }) => (
  <section class="card" aria-labelledby={`${id}-heading`}>
    <h2 id={`${id}-heading`}>{title}</h2>
    {before}
    {count === 0 ? (
      <p class="muted">{empty}</p>
    ) : (
      <table class={tableClass}>
        {caption ? <caption>{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((col) => (
              <th scope="col" class={col.num ? 'num' : undefined}>
                {col.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    )}
    {pager ? <Pager href={pager.href} label={pager.label} /> : null}
  </section>
);

/** The retention window of the query log, said where a page reads it (history, a report's attached queries). */
export const RetentionNote: FC<{ days: number }> = ({ days }) => (
  <p class="muted">
    Runs older than {days} days are in the archive: the QUERY_LOG_ARCHIVE bucket in R2, one file per day under{' '}
    <code>query-log/YYYY-MM-DD/</code> (QUERY_LOG_RETENTION_DAYS; docs/deploy.md, "Query-log retention").
  </p>
);

/** Who filed or ran something: the key (by name) or the assistant connection, and its user; each a filter link. */
export const CallerCell: FC<{
  base: string;
  caller: { kind: 'key' | 'connection'; id: string; name: string | null };
  user: { id: string; email: string | null } | null;
}> = ({ base, caller, user }) => (
  <>
    {caller.kind === 'key' ? (
      <>
        key <a href={`${base}?key=${encodeURIComponent(caller.id)}`}>{caller.name ?? caller.id}</a>
      </>
    ) : (
      // Named as the Assistants page names it: the assistant, for the user who connected it.
      <a href={`${base}?connection=${encodeURIComponent(caller.id)}`} title={`connection ${caller.id}`}>
        {caller.name ?? `assistant ${caller.id.slice(0, 12)}…`}
      </a>
    )}
    {user ? (
      <div class="muted">
        {caller.kind === 'connection' ? 'for' : 'of'} <a href={`${base}?user=${encodeURIComponent(user.id)}`}>{user.email ?? user.id}</a>
      </div>
    ) : null}
  </>
);
