import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { z } from 'zod';
import type { AppEnv } from '../../app-env';
import type { AdminReach } from '../../auth/oauth-principal';
import { ApiError } from '../../errors';
import {
  adminWriter,
  createManagedMemory,
  deleteManagedMemory,
  listManagedMemories,
  MemoryFormSchema,
  memoryOwnerChoices,
  NewMemoryFormSchema,
  restoreManagedMemory,
  updateManagedMemory,
  type ManagedMemory,
  type MemoryOwnerChoice,
  type MemoryRevisionView,
  type MemoryTableGroup,
} from './admin';
import { MEMORY_LIMITS } from './rules';
import { requireAdminPost, type Admin, adminGet } from '../../web/guards';
import { AdminPage, Time } from '../../web/layout';
import { renderMarkdown } from '../../web/markdown';
import { renderPage } from '../../web/render';
import { currentScope } from '../../context';
import { ConsoleCss, FilterForm, filterQuery } from '../../web/console-parts';

const PATH = '/admin/memories';

/** What this page adds to the shared stylesheet: the markdown box and the content textarea. */
const CSS = `
textarea{width:100%;min-height:10rem;padding:.5rem .75rem;font:inherit;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:6px}
textarea:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
textarea[aria-invalid="true"]{border-color:var(--danger);border-width:2px}
div.memory{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.25rem .75rem;margin:.5rem 0}
pre.memory{white-space:pre-wrap;word-break:break-word;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.75rem;
 margin:.5rem 0;font-size:.95rem}
article.memory{border-top:1px solid var(--line);padding:.75rem 0}
article.memory:first-of-type{border-top:0}
article.memory h3{font-size:1.05rem;margin:0 0 .25rem}
nav.tabs{display:flex;gap:1rem;margin:0 0 1rem}
nav.tabs a[aria-current="page"]{font-weight:700;text-decoration:none;color:var(--fg)}
ol.history{padding-left:1.2rem;margin:.25rem 0}
`;

/** A refused form, shown again with the values as typed and the problem. */
export interface MemoryFormState {
  /** 'new' or the memory id being edited. */
  target: string;
  error: string;
  field: string;
  values: { owner?: string; table?: string; title?: string; content?: string };
}

export interface MemoriesPageProps {
  nonce: string;
  email: string;
  csrf: string;
  deleted: boolean;
  /** The brand and text filters as given (`brand`, `q`), and the brands to choose from. */
  filter: { brand?: string; q?: string };
  brands: { id: string; name: string | null }[];
  groups: MemoryTableGroup[];
  owners: MemoryOwnerChoice[];
  notice?: string;
  form?: MemoryFormState;
}

const ACTIONS: Record<MemoryRevisionView['action'], string> = {
  create: 'Created',
  update: 'Edited',
  delete: 'Deleted',
  restore: 'Restored',
};
const KINDS: Record<string, string> = { key: 'API key', user: 'administrator', cli: 'admin CLI', seed: 'demo data' };
const VIA: Record<string, string> = { rest: 'REST API', mcp: 'MCP', admin: 'admin pages', cli: 'admin CLI', seed: 'seed' };

const Writer: FC<{ kind: string; name: string }> = ({ kind, name }) => {
  const what = KINDS[kind] ?? kind;
  return what === name ? (
    <>{name}</>
  ) : (
    <>
      {name} <span class="muted">({what})</span>
    </>
  );
};

/** Title, table and content inputs; `prefix` keeps ids unique per form. */
const Fields: FC<{ prefix: string; values: MemoryFormState['values']; invalid?: string; errorId?: string; label: string }> = ({
  prefix,
  values,
  invalid,
  errorId,
  label,
}) => {
  const attrs = (name: string) => ({
    id: `${prefix}-${name}`,
    name,
    'aria-invalid': invalid === name ? 'true' : undefined,
    'aria-describedby': invalid === name ? errorId : undefined,
    autofocus: invalid === name,
  });
  return (
    <>
      <label for={`${prefix}-title`}>
        Title<span class="visually-hidden"> of {label}</span> <span class="hint">up to {MEMORY_LIMITS.titleChars} characters</span>
      </label>
      <input {...attrs('title')} value={values.title ?? ''} required maxlength={MEMORY_LIMITS.titleChars} />
      <label for={`${prefix}-table`}>
        Table<span class="visually-hidden"> of {label}</span> <span class="hint">e.g. fact__orders; empty = general context</span>
      </label>
      <input {...attrs('table')} value={values.table ?? ''} autocomplete="off" />
      <label for={`${prefix}-content`}>
        Content<span class="visually-hidden"> of {label}</span> <span class="hint">markdown, up to 8 KB</span>
      </label>
      <textarea {...attrs('content')} required>
        {values.content ?? ''}
      </textarea>
    </>
  );
};

const Alert: FC<{ id: string; message: string }> = ({ id, message }) => (
  <p class="alert" role="alert" id={id}>
    {message}
  </p>
);

const History: FC<{ m: ManagedMemory }> = ({ m }) => (
  <details>
    <summary>
      History ({m.revisions.length})<span class="visually-hidden"> of {m.row.title}</span>
    </summary>
    <ol class="history">
      {m.revisions.map((r) => (
        <li>
          {ACTIONS[r.action]} by <Writer kind={r.actorKind} name={r.actorName} /> via {VIA[r.transport] ?? r.transport}, <Time ms={r.at} />
          {r.action === 'update' && r.before ? (
            <details>
              <summary>What it replaced</summary>
              <p>
                <strong>{r.before.title}</strong> {r.before.table ? <code>{r.before.table}</code> : <span class="muted">general</span>}
              </p>
              <pre class="memory">{r.before.content}</pre>
            </details>
          ) : null}
        </li>
      ))}
    </ol>
  </details>
);

const MemoryItem: FC<{ m: ManagedMemory; csrf: string; form?: MemoryFormState }> = ({ m, csrf, form }) => {
  const path = `/admin/memories/${encodeURIComponent(m.id)}`;
  const editing = form?.target === m.id ? form : undefined;
  const errorId = `memory-${m.id}-error`;
  return (
    <article class="memory" id={`memory-${m.id}`} aria-labelledby={`memory-${m.id}-title`}>
      <h3 id={`memory-${m.id}-title`}>{m.row.title}</h3>
      <p class="muted">
        {m.ownerLabel} · written by <Writer kind={m.row.author_kind} name={m.row.author_name} />, <Time ms={m.row.created_at} />
        {m.row.updated_at !== m.row.created_at ? (
          <>
            {' '}
            · last change by <Writer kind={m.row.updated_by_kind} name={m.row.updated_by_name} />, <Time ms={m.row.updated_at} />
          </>
        ) : null}
      </p>
      {/* Markdown, safe subset: the content is escaped whole, then a few constructs become markup (web/markdown.ts). */}
      <div class="memory markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(m.row.content) }} />
      <History m={m} />
      {!m.writable ? (
        <p class="muted">
          {m.row.scope === 'system'
            ? 'System memories are changed with the admin CLI.'
            : 'Only an administrator of the whole organization can change this.'}
        </p>
      ) : m.row.deleted_at !== null ? (
        <form method="post" action={`${path}/restore`}>
          <input type="hidden" name="csrf" value={csrf} />
          {editing ? <Alert id={errorId} message={editing.error} /> : null}
          <button type="submit" aria-label={`Restore memory ${m.row.title}`}>
            Restore
          </button>
        </form>
      ) : (
        <div class="actions">
          <details open={editing !== undefined}>
            <summary>
              Edit<span class="visually-hidden"> memory {m.row.title}</span>
            </summary>
            <form method="post" action={path}>
              <input type="hidden" name="csrf" value={csrf} />
              {editing ? <Alert id={errorId} message={editing.error} /> : null}
              <Fields
                prefix={`edit-${m.id}`}
                label={`memory ${m.row.title}`}
                values={editing?.values ?? { title: m.row.title, table: m.row.table_name ?? '', content: m.row.content }}
                invalid={editing?.field}
                errorId={errorId}
              />
              <div class="actions">
                <button type="submit" aria-label={`Save memory ${m.row.title}`}>
                  Save
                </button>
              </div>
            </form>
          </details>
          <form method="post" action={`${path}/delete`}>
            <input type="hidden" name="csrf" value={csrf} />
            <button type="submit" class="danger" aria-label={`Delete memory ${m.row.title}`}>
              Delete
            </button>
          </form>
        </div>
      )}
    </article>
  );
};

export const MemoriesPage: FC<MemoriesPageProps> = ({ nonce, email, csrf, deleted, filter, brands, groups, owners, notice, form }) => {
  const creating = form?.target === 'new' ? form : undefined;
  const values = { brand: filter.brand ?? '', q: filter.q ?? '' };
  const tab = (d: boolean) => `${PATH}?${filterQuery(values, d ? { deleted: '1' } : {})}`.replace(/\?$/, '');
  const filtered = values.brand !== '' || values.q !== '';
  return (
    <AdminPage title="Memories" nonce={nonce} current="memories" email={email} csrf={csrf} notice={notice}>
      <ConsoleCss nonce={nonce} />
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: CSS }} />
      <p class="muted">
        Notes on what each table means and how to analyze it. Assistants and API clients read them as data (list_memories, GET
        /v1/data/memories). Every change is recorded.
      </p>
      <nav class="tabs" aria-label="Memories">
        <a href={tab(false)} aria-current={deleted ? undefined : 'page'}>
          Live
        </a>
        <a href={tab(true)} aria-current={deleted ? 'page' : undefined}>
          Deleted
        </a>
      </nav>
      <FilterForm
        action={PATH}
        fields={[
          { name: 'brand', label: 'Reaches brand', options: brands.map((b) => ({ value: b.id, label: b.name ?? b.id })) },
          { name: 'q', label: 'Words', placeholder: 'in the title, table or text' },
        ]}
        values={values}
        keep={deleted ? { deleted: '1' } : {}}
      />
      {deleted ? null : (
        <section class="card" aria-labelledby="new-memory-heading">
          <h2 id="new-memory-heading">Write a memory</h2>
          <form method="post" action="/admin/memories">
            <input type="hidden" name="csrf" value={csrf} />
            {creating ? <Alert id="new-memory-error" message={creating.error} /> : null}
            <label for="new-owner">Applies to</label>
            <select id="new-owner" name="owner" required aria-invalid={creating?.field === 'owner' ? 'true' : undefined}>
              {owners.map((o) => (
                <option value={o.value} selected={creating?.values.owner === o.value}>
                  {o.label}
                </option>
              ))}
            </select>
            <Fields
              prefix="new"
              label="the new memory"
              values={creating?.values ?? {}}
              invalid={creating?.field}
              errorId="new-memory-error"
            />
            <div class="actions">
              <button type="submit">Save memory</button>
            </div>
          </form>
        </section>
      )}
      {groups.length === 0 ? (
        <p class="muted">{filtered ? 'No memories match.' : deleted ? 'No deleted memories.' : 'No memories yet.'}</p>
      ) : null}
      {groups.map((g) => (
        <section class="card" aria-label={g.table ? `Table ${g.table}` : 'General context'}>
          <h2>{g.table ? <code>{g.table}</code> : 'General context'}</h2>
          {g.memories.map((m) => (
            <MemoryItem m={m} csrf={csrf} form={form} />
          ))}
        </section>
      ))}
    </AdminPage>
  );
};

/** Fixed texts for `?notice=`; the parameter only picks one, it is never echoed. */
const NOTICES: Record<string, string> = {
  created: 'The memory was saved. Assistants and API clients read it from now on.',
  saved: 'The memory was changed. The previous version is in its history.',
  deleted: 'The memory was deleted. It is listed under Deleted, where it can be restored.',
  restored: 'The memory was restored.',
};

async function renderMemories(
  c: Context<AppEnv>,
  { user, csrf }: Admin,
  status: 200 | 400 | 403 | 404 | 409,
  opts: { deleted: boolean; notice?: string; form?: MemoryFormState },
) {
  const filter = { brand: c.req.query('brand') || undefined, q: (c.req.query('q') ?? '').slice(0, 200) || undefined };
  const [groups, owners] = await Promise.all([
    listManagedMemories(c.env, user.reach, { deleted: opts.deleted, brandId: filter.brand, text: filter.q }),
    memoryOwnerChoices(c.env, user.reach),
  ]);
  return renderPage(c, status, (nonce) => (
    <MemoriesPage
      nonce={nonce}
      email={user.reach.email}
      csrf={csrf}
      deleted={opts.deleted}
      filter={filter}
      brands={user.reach.brands}
      groups={groups}
      owners={owners}
      notice={opts.notice}
      form={opts.form}
    />
  ));
}

/** The first problem of a form, naming its field. */
function formProblem(error: z.ZodError): { field: string; message: string } {
  const first = error.issues[0];
  return { field: String(first?.path[0] ?? ''), message: first?.message ?? 'invalid memory' };
}

/** A refused write as the page explains it; anything else is thrown on (500 page, cause in the log). */
function refusal(err: unknown): { status: 400 | 403 | 404 | 409; message: string } {
  if (!(err instanceof ApiError)) throw err;
  if (err.code === 'MEMORY_NOT_FOUND') return { status: 404, message: 'That memory was not found.' };
  if (err.code === 'MEMORY_WRITE_FORBIDDEN') return { status: 403, message: `Not saved: ${err.message}.` };
  if (err.code === 'MEMORY_LIMIT_EXCEEDED') return { status: 409, message: `Not saved: ${err.message}.` };
  if (err.code === 'VALIDATION') return { status: 400, message: `Not saved: ${err.message}.` };
  throw err;
}

type Write = (reach: AdminReach, memoryId: string) => Promise<void>;

/**
 * `/admin/memories`: memories by table, with create, edit, delete, restore and the history of each. Delete has no
 * confirmation page: it is undone with Restore, and both are recorded.
 */
export function memoriesRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/memories', (c, signedIn) =>
    renderMemories(c, signedIn, 200, { deleted: c.req.query('deleted') === '1', notice: NOTICES[c.req.query('notice') ?? ''] }),
  );

  admin.post('/memories', async (c) => {
    const now = Date.now();
    const g = await requireAdminPost(c, now);
    if (!g.ok) return g.res;
    const values = { owner: g.value.form.owner, table: g.value.form.table, title: g.value.form.title, content: g.value.form.content };
    const parsed = NewMemoryFormSchema.safeParse(values);
    if (!parsed.success) {
      const { field, message } = formProblem(parsed.error);
      return renderMemories(c, g.value, 400, { deleted: false, form: { target: 'new', field, error: `Not saved. ${message}`, values } });
    }
    try {
      const id = await createManagedMemory(c.env, adminWriter(g.value.user.reach, currentScope().requestId, now), parsed.data);
      return c.redirect(`/admin/memories?notice=created#memory-${encodeURIComponent(id)}`, 303);
    } catch (err) {
      const r = refusal(err);
      return renderMemories(c, g.value, r.status, { deleted: false, form: { target: 'new', field: '', error: r.message, values } });
    }
  });

  admin.post('/memories/:id', async (c) => {
    const now = Date.now();
    const g = await requireAdminPost(c, now);
    if (!g.ok) return g.res;
    const id = c.req.param('id');
    const values = { table: g.value.form.table, title: g.value.form.title, content: g.value.form.content };
    const parsed = MemoryFormSchema.safeParse(values);
    if (!parsed.success) {
      const { field, message } = formProblem(parsed.error);
      return renderMemories(c, g.value, 400, { deleted: false, form: { target: id, field, error: `Not saved. ${message}`, values } });
    }
    try {
      await updateManagedMemory(c.env, g.value.user.reach, adminWriter(g.value.user.reach, currentScope().requestId, now), id, parsed.data);
      return c.redirect(`/admin/memories?notice=saved#memory-${encodeURIComponent(id)}`, 303);
    } catch (err) {
      const r = refusal(err);
      return renderMemories(c, g.value, r.status, { deleted: false, form: { target: id, field: '', error: r.message, values } });
    }
  });

  const action = (name: 'delete' | 'restore', write: (c: Context<AppEnv>, now: number) => Write, notice: string, deletedTab: boolean) =>
    admin.post(`/memories/:id/${name}`, async (c) => {
      const now = Date.now();
      const g = await requireAdminPost(c, now);
      if (!g.ok) return g.res;
      const id = c.req.param('id');
      try {
        await write(c, now)(g.value.user.reach, id);
        return c.redirect(`/admin/memories?notice=${notice}`, 303);
      } catch (err) {
        const r = refusal(err);
        return renderMemories(c, g.value, r.status, { deleted: deletedTab, form: { target: id, field: '', error: r.message, values: {} } });
      }
    });
  action(
    'delete',
    (c, now) => (reach, id) => deleteManagedMemory(c.env, reach, adminWriter(reach, currentScope().requestId, now), id),
    'deleted',
    false,
  );
  action(
    'restore',
    (c, now) => (reach, id) => restoreManagedMemory(c.env, reach, adminWriter(reach, currentScope().requestId, now), id),
    'restored',
    true,
  );
}
