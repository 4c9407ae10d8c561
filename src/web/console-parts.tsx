import type { FC } from 'hono/jsx';

/**
 * What the inbox and history pages share: their stylesheet additions, the filter form (a GET form, so a filtered view
 * is a link to keep or send), and the "older" link of keyset pagination.
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

/** A GET form of filters, filled with the current values; an invalid value is named in an alert. */
export const FilterForm: FC<{ action: string; fields: FilterField[]; values: Record<string, string>; error?: string }> = ({
  action,
  fields,
  values,
  error,
}) => (
  <section class="card" aria-labelledby="filters-heading">
    <h2 id="filters-heading">Filters</h2>
    {error ? (
      <p class="alert" role="alert">
        Not filtered: {error}.
      </p>
    ) : null}
    <form method="get" action={action} class="filters">
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
        <a class="button secondary" href={action}>
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

export const Pager: FC<{ href: string | null; label: string }> = ({ href, label }) =>
  href ? (
    <p>
      <a href={href}>{label} →</a>
    </p>
  ) : null;

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
