import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { consolePrincipal } from '../../auth/oauth-principal';
import { opContext, type OpContext } from '../../context';
import { ApiError } from '../../errors';
import { type Admin, adminGet } from '../../web/guards';
import { AdminPage } from '../../web/layout';
import { renderMarkdown } from '../../web/markdown';
import { renderPage } from '../../web/render';
import { z } from 'zod';
import { count } from '../keys/units';
import { ConsoleCss } from '../../web/console-parts';
import { findItem, itemPath, search, SEARCH_PAGE, type KnowledgeItem, type SearchResult } from './search';

/** Results the console's search shows (as many as the assistants' `search` returns). */
const PAGE_RESULTS = 20;

const CSS = `ol.results{padding-left:1.2rem}ol.results li{margin:.5rem 0}
div.snippet{color:var(--muted)}div.snippet p{margin:0}`;

/** The console's shared stylesheet additions and this page's own. */
const PageCss: FC<{ nonce: string }> = ({ nonce }) => (
  <>
    <ConsoleCss nonce={nonce} />
    <style nonce={nonce} dangerouslySetInnerHTML={{ __html: CSS }} />
  </>
);

/**
 * What the signed-in administrator reads: the items their own assistant connection would find, through the same
 * operations and so the same scoping (consolePrincipal). Nothing here spends a run or writes a query-log row.
 */
function pageContext(c: Context<AppEnv>, signedIn: Admin): OpContext {
  return opContext('rest', consolePrincipal(c.env, signedIn.user.reach));
}

const SearchForm: FC<{ q: string }> = ({ q }) => (
  <form method="get" action={SEARCH_PAGE} role="search">
    <label for="q">Words to find</label>
    <input id="q" name="q" type="search" value={q} maxlength={500} />
    <button type="submit">Search</button>
  </form>
);

const Results: FC<{ q: string; results: SearchResult[] }> = ({ q, results }) =>
  results.length === 0 ? (
    <p>Nothing you can reach matches “{q}”.</p>
  ) : (
    <ol class="results">
      {results.map((r) => (
        <li>
          <a href={itemPath(r.id)}>{r.title}</a>
          {/* A cut of the item's Markdown, rendered inert as the memory pages do (web/markdown.ts). */}
          <div class="snippet markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(r.text) }} />
        </li>
      ))}
    </ol>
  );

/** What a table item's text (describe_table's answer, as JSON for the model) holds that a person reads. */
const DescribedTableSchema = z.object({
  sqlName: z.string(),
  description: z.string().nullable(),
  layer: z.string().nullable(),
  rowCount: z.number().nullable(),
  coverage: z
    .object({
      firstDay: z.string(),
      lastDay: z.string(),
      lastCompleteDay: z.string().nullable().optional(),
      partialMonth: z.string().nullable().optional(),
      partialWeek: z.string().nullable().optional(),
    })
    .nullable(),
  columns: z.array(z.object({ name: z.string(), type: z.string(), mode: z.string().optional(), description: z.string().nullable() })),
  memories: z.array(z.object({ title: z.string(), content: z.string() })),
});

/** A table item as a page: its facts, its columns as a table, the memories that apply as Markdown. */
const TableView: FC<{ t: z.infer<typeof DescribedTableSchema> }> = ({ t }) => (
  <>
    {t.description ? <p>{t.description}</p> : null}
    <dl class="facts">
      <dt>In SQL</dt>
      <dd>
        <code>{t.sqlName}</code>
      </dd>
      {t.layer ? (
        <>
          <dt>Layer</dt>
          <dd>{t.layer}</dd>
        </>
      ) : null}
      {t.rowCount !== null ? (
        <>
          <dt>Rows</dt>
          <dd>{count(t.rowCount)}</dd>
        </>
      ) : null}
      {t.coverage ? (
        <>
          <dt>Days covered</dt>
          <dd>
            {t.coverage.firstDay} to {t.coverage.lastDay}
          </dd>
        </>
      ) : null}
      {t.coverage?.lastCompleteDay ? (
        <>
          <dt>Complete to</dt>
          <dd>
            {t.coverage.lastCompleteDay}
            {t.coverage.partialMonth ? ` (month ${t.coverage.partialMonth} so far)` : ''}
          </dd>
        </>
      ) : null}
    </dl>
    <h2>Columns</h2>
    <table class="compact">
      <thead>
        <tr>
          <th scope="col">Column</th>
          <th scope="col">Type</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {t.columns.map((col) => (
          <tr>
            <td data-label="Column">
              <code>{col.name}</code>
            </td>
            <td data-label="Type" class="keep-words">
              {col.mode === 'REPEATED' ? `${col.type} (repeated)` : col.type}
            </td>
            <td data-label="Description">{col.description ?? <span class="muted">none</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
    {t.memories.length > 0 ? (
      <>
        <h2>Memories that apply</h2>
        {t.memories.map((m) => (
          <article class="memory">
            <h3>{m.title}</h3>
            <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(m.content) }} />
          </article>
        ))}
      </>
    ) : null}
  </>
);

/** The item's text as a person reads it: a table as facts and columns, anything else as inert Markdown. */
const ItemText: FC<{ item: KnowledgeItem }> = ({ item }) => {
  if (item.metadata.kind === 'table') {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(item.text);
    } catch {
      // Not JSON: shown as text below.
    }
    const table = DescribedTableSchema.safeParse(parsed);
    if (table.success) return <TableView t={table.data} />;
  }
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(item.text) }} />;
};

const Item: FC<{ item: KnowledgeItem }> = ({ item }) => (
  <>
    <dl class="facts">
      <dt>Id</dt>
      <dd>
        <code>{item.id}</code>
      </dd>
      {Object.entries(item.metadata).map(([k, v]) => (
        <>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </>
      ))}
    </dl>
    <section class="card">
      <ItemText item={item} />
    </section>
  </>
);

/**
 * The console's view of what assistants find with `search` and read with `fetch`: `/admin/search?q=` lists matches,
 * `/admin/search/<id>` shows one item in full. Search results' `url`s point here (on CONSOLE_ORIGIN), so a person
 * following an assistant's citation signs in, lands back on the item (src/web/return-path.ts) and reads what the
 * assistant read; an item they may not see is the same 404 as one that does not exist.
 */
export function searchRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/search', async (c, signedIn) => {
    const q = (c.req.query('q') ?? '').slice(0, 500);
    const results = q.trim() === '' ? null : await search(pageContext(c, signedIn), q, PAGE_RESULTS);
    return renderPage(c, 200, (nonce) => (
      <AdminPage nonce={nonce} title="Search the catalog" current="catalog" email={signedIn.user.reach.email} csrf={signedIn.csrf}>
        <PageCss nonce={nonce} />
        <p class="muted">What an assistant you connect finds with its search tool: brands, reports, tables, saved queries, memories.</p>
        <SearchForm q={q} />
        {results ? <Results q={q} results={results} /> : null}
      </AdminPage>
    ));
  });

  adminGet(admin, '/search/:id', async (c, signedIn) => {
    const id = c.req.param('id');
    const email = signedIn.user.reach.email;
    let item: KnowledgeItem;
    try {
      item = await findItem(pageContext(c, signedIn), id);
    } catch (err) {
      // One answer whether the item does not exist or is not this person's to see: nothing says which.
      if (!(err instanceof ApiError) || (err.code !== 'NOT_FOUND' && err.code !== 'FORBIDDEN_BRAND')) throw err;
      return renderPage(c, 404, (nonce) => (
        <AdminPage nonce={nonce} title="Not found" current="catalog" email={email} csrf={signedIn.csrf}>
          <p>
            There is no item <code>{id}</code> that you can see.
          </p>
          <p>
            <a href={SEARCH_PAGE}>Search the catalog</a>
          </p>
        </AdminPage>
      ));
    }
    return renderPage(c, 200, (nonce) => (
      <AdminPage nonce={nonce} title={item.title} current="catalog" email={email} csrf={signedIn.csrf}>
        <PageCss nonce={nonce} />
        <Item item={item} />
        <p>
          <a href={SEARCH_PAGE}>Search the catalog</a>
        </p>
      </AdminPage>
    ));
  });
}
