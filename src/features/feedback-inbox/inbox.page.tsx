import { currentScope } from '../../context';
import { callerPickers, listConnections, type ConnectionChoice } from '../query-history/history';
import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { listManagedKeys } from '../keys/keys';
import {
  addFeedbackNote,
  assignFeedback,
  changeFeedbackStatus,
  listAssignees,
  FEEDBACK_STATUSES,
  INBOX_PAGE_SIZE,
  listFeedback,
  loadFeedbackDetail,
  NEXT_STATUSES,
  NOTE_MAX_CHARS,
  parseInboxFilter,
  statusChangeProblem,
  type AttachedQuery,
  type FeedbackDetail,
  type FeedbackItem,
  type FeedbackStatus,
  type InboxFilter,
} from './inbox';
import { visibilityOf, type Visibility } from '../../auth/ownership';
import { newId } from '../../lib/ids';
import { enqueueNotification } from '../notifications/notifications';
import { requireAdminPost, type Admin, adminGet } from '../../web/guards';
import { AdminPage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { count, formatBytes } from '../keys/units';
import {
  CallerCell,
  ConsoleCss,
  FilterForm,
  filterQuery,
  ListCard,
  listPage,
  RetentionNote,
  type FilterField,
  type ListColumn,
} from '../../web/console-parts';
import { configOf } from '../../env';

const PATH = '/admin/inbox';

const NOTICES: Record<string, string> = {
  'status-changed': 'The status was changed and recorded.',
  'note-added': 'The note was added.',
  assigned: 'The assignment was changed and recorded.',
  'status-conflict': 'Someone changed this report while you were looking at it: here is its status now. Nothing was changed.',
};

const STATUS_LABEL: Record<FeedbackStatus, string> = {
  open: 'Open',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
  dismissed: 'Dismissed',
};

const Filer: FC<{ f: Pick<FeedbackItem, 'filer' | 'user'> }> = ({ f }) => <CallerCell base={PATH} caller={f.filer} user={f.user} />;

const Severity: FC<{ s: FeedbackItem['severity'] }> = ({ s }) =>
  s === null ? <span class="muted">none</span> : <span class={`sev sev-${s}`}>{s}</span>;

const Row: FC<{ f: FeedbackItem }> = ({ f }) => (
  <tr id={`report-${f.id}`}>
    <td data-label="Filed">
      <Time ms={f.createdAt} />
    </td>
    <td data-label="Report">
      <a href={`${PATH}/${encodeURIComponent(f.id)}`}>{f.summary}</a>
      <div class="muted">
        <code>{f.id}</code>
      </div>
    </td>
    <td data-label="Brand">{f.brand ? (f.brand.name ?? f.brand.id) : <span class="muted">organization-wide</span>}</td>
    <td data-label="Severity">
      <Severity s={f.severity} />
    </td>
    <td data-label="Status">
      <span class={`st st-${f.status}`}>{STATUS_LABEL[f.status]}</span>
    </td>
    <td data-label="Filed by">
      <Filer f={f} />
    </td>
    <td data-label="Assignee">{f.assignee ? (f.assignee.email ?? f.assignee.id) : <span class="muted">nobody</span>}</td>
  </tr>
);

const REPORT_COLUMNS: ListColumn[] = ['Filed', 'Report', 'Brand', 'Severity', 'Status', 'Filed by', 'Assignee'].map((label) => ({ label }));

function filterFields(admin: Admin, keys: { id: string; name: string }[], connections: ConnectionChoice[]): FilterField[] {
  return [
    { name: 'brand', label: 'Brand', options: admin.user.reach.brands.map((b) => ({ value: b.id, label: b.name ?? b.id })) },
    { name: 'severity', label: 'Severity', options: ['high', 'medium', 'low'].map((s) => ({ value: s, label: s })) },
    { name: 'status', label: 'Status', options: FEEDBACK_STATUSES.map((s) => ({ value: s, label: STATUS_LABEL[s] })) },
    { name: 'key', label: 'Filed by key', options: keys.map((k) => ({ value: k.id, label: k.name })) },
    ...callerPickers(connections),
    {
      name: 'assignee',
      label: 'Assignee',
      options: [
        { value: admin.user.reach.userId, label: 'me' },
        { value: 'none', label: 'nobody' },
      ],
    },
    { name: 'from', label: 'From', type: 'date' },
    { name: 'to', label: 'To', type: 'date' },
  ];
}

async function renderList(c: Context<AppEnv>, admin: Admin) {
  const raw = c.req.query();
  const parsed = parseInboxFilter(raw);
  const filter: InboxFilter = parsed.success ? parsed.data : {};
  const [items, keys, connections] = await Promise.all([
    parsed.success ? listFeedback(c.env, visibilityOf(admin.user.reach), filter, INBOX_PAGE_SIZE + 1) : Promise.resolve([]),
    listManagedKeys(c.env, admin.user.reach),
    listConnections(c.env, visibilityOf(admin.user.reach)),
  ]);
  const { shown, next } = listPage(items, INBOX_PAGE_SIZE);
  return renderPage(c, parsed.success ? 200 : 400, (nonce) => (
    <AdminPage title="Data-issue inbox" nonce={nonce} current="inbox" email={admin.user.reach.email} csrf={admin.csrf}>
      <ConsoleCss nonce={nonce} />
      <p>
        <a href="/admin/notifications">Notifications: where new reports and status changes are sent</a>
      </p>
      <FilterForm
        action={PATH}
        fields={filterFields(admin, keys, connections)}
        values={raw}
        error={parsed.success ? undefined : parsed.error.issues[0]?.message}
      />
      <ListCard
        id="reports"
        title="Reports"
        caption="Data issues filed by API keys and connected assistants on the brands you administer, newest first."
        columns={REPORT_COLUMNS}
        count={shown.length}
        empty="No reports match."
        tableClass="compact"
        pager={{ href: next ? `${PATH}?${filterQuery(raw, { before: next })}` : null, label: 'Older reports' }}
      >
        {shown.map((f) => (
          <Row f={f} />
        ))}
      </ListCard>
    </AdminPage>
  ));
}

const Transcript: FC<{ turns: FeedbackItem['transcript'] }> = ({ turns }) =>
  turns.length === 0 ? (
    <p class="muted">No transcript was attached.</p>
  ) : (
    <ol class="conversation">
      {turns.map((t) => (
        <li class={`turn turn-${t.role === 'user' || t.role === 'assistant' || t.role === 'tool' ? t.role : 'other'}`}>
          <span class="who">{t.role === 'user' ? 'User' : t.role === 'assistant' ? 'Assistant' : t.role === 'tool' ? 'Tool' : t.role}</span>
          <div class="said">{t.content}</div>
        </li>
      ))}
    </ol>
  );

export function historyHref(q: Pick<AttachedQuery, 'requestId'>): string {
  return `/admin/history?requestId=${encodeURIComponent(q.requestId)}`;
}

const AttachedQueries: FC<{ queries: AttachedQuery[] }> = ({ queries }) =>
  queries.length === 0 ? (
    <p class="muted">No queries from the 24 hours before filing were attached.</p>
  ) : (
    <table class="compact">
      <caption>The filer's last runs before filing (up to 20, newest first), as logged.</caption>
      <thead>
        <tr>
          <th scope="col">Ran</th>
          <th scope="col">Query</th>
          <th scope="col">Outcome</th>
          <th scope="col">Rows</th>
          <th scope="col">Bytes billed</th>
          <th scope="col">History</th>
        </tr>
      </thead>
      <tbody>
        {queries.map((q) => (
          <tr>
            <td data-label="Ran">
              <Time ms={q.createdAt} />
            </td>
            <td data-label="Query">
              {q.queryId ? (
                <div>
                  stored query <code>{q.queryId}</code>
                  {q.period ? ` for ${q.period.startDate} to ${q.period.endDate}` : ''}
                </div>
              ) : null}
              <pre class="sql">{q.sql ?? ''}</pre>
            </td>
            <td data-label="Outcome">{q.outcome === 'OK' ? q.dryRun ? 'OK (dry run)' : 'OK' : <span class="blocked">{q.outcome}</span>}</td>
            <td data-label="Rows">{q.rowCount === null ? '–' : count(q.rowCount)}</td>
            <td data-label="Bytes billed">{q.bytesBilled === null ? '–' : formatBytes(q.bytesBilled)}</td>
            <td data-label="History">
              <a href={historyHref(q)} aria-label={`Open the run of ${new Date(q.createdAt).toISOString()} in the query history`}>
                Open in history
              </a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

interface StatusFormState {
  error: string;
  status?: string;
  note?: string;
}

const StatusForm: FC<{ item: FeedbackItem; csrf: string; state?: StatusFormState }> = ({ item, csrf, state }) => {
  const next = NEXT_STATUSES[item.status];
  return (
    <form method="post" action={`${PATH}/${encodeURIComponent(item.id)}/status`}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="from" value={item.status} />
      {state ? (
        <p class="alert" role="alert" id="status-error">
          {state.error}
        </p>
      ) : null}
      <label for="status-to">New status</label>
      <select id="status-to" name="status">
        {next.map((s) => (
          <option value={s} selected={state?.status === s}>
            {s === 'open' ? 'Reopen' : STATUS_LABEL[s]}
          </option>
        ))}
      </select>
      <label for="status-note">
        Note <span class="hint">required to resolve, dismiss or reopen; the filer reads it</span>
      </label>
      <textarea
        id="status-note"
        name="note"
        maxlength={NOTE_MAX_CHARS}
        aria-invalid={state ? 'true' : undefined}
        aria-describedby={state ? 'status-error' : undefined}
      >
        {state?.note ?? ''}
      </textarea>
      <div class="actions">
        <button type="submit">Change status</button>
      </div>
    </form>
  );
};

const NoteForm: FC<{ item: FeedbackItem; csrf: string; error?: string }> = ({ item, csrf, error }) => (
  <form method="post" action={`${PATH}/${encodeURIComponent(item.id)}/note`}>
    <input type="hidden" name="csrf" value={csrf} />
    <input type="hidden" name="from" value={item.status} />
    {error ? (
      <p class="alert" role="alert" id="note-error">
        {error}
      </p>
    ) : null}
    <label for="note-text">
      Add a note <span class="hint">without changing the status; the filer reads it</span>
    </label>
    <textarea id="note-text" name="note" maxlength={NOTE_MAX_CHARS} required aria-describedby={error ? 'note-error' : undefined} />
    <div class="actions">
      <button type="submit" class="secondary">
        Add note
      </button>
    </div>
  </form>
);

const AssignForm: FC<{ item: FeedbackItem; csrf: string; assignees: { id: string; email: string }[] }> = ({ item, csrf, assignees }) => (
  <form method="post" action={`${PATH}/${encodeURIComponent(item.id)}/assign`}>
    <input type="hidden" name="csrf" value={csrf} />
    <label for="assignee">Assignee</label>
    <select id="assignee" name="assignee">
      <option value="" selected={item.assignee === null}>
        Nobody
      </option>
      {assignees.map((a) => (
        <option value={a.id} selected={item.assignee?.id === a.id}>
          {a.email}
        </option>
      ))}
    </select>
    <div class="actions">
      <button type="submit" class="secondary">
        Assign
      </button>
    </div>
  </form>
);

async function renderDetail(
  c: Context<AppEnv>,
  admin: Admin,
  detail: FeedbackDetail,
  status: 200 | 400 | 409,
  extra: { notice?: string; state?: StatusFormState; noteError?: string } = {},
) {
  const { item, changes, deliveries } = detail;
  const assignees = await listAssignees(c.env, item);
  return renderPage(c, status, (nonce) => (
    <AdminPage
      title={`Report ${item.id}`}
      nonce={nonce}
      current="inbox"
      email={admin.user.reach.email}
      csrf={admin.csrf}
      notice={extra.notice}
    >
      <ConsoleCss nonce={nonce} />
      <p>
        <a href={PATH}>← Inbox</a>
      </p>
      <section class="card" aria-labelledby="summary-heading">
        <h2 id="summary-heading">{item.summary}</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <span class={`st st-${item.status}`}>{STATUS_LABEL[item.status]}</span>
            {item.statusChangedBy ? (
              <span class="muted">
                {' '}
                by {item.statusChangedBy}, <Time ms={item.statusChangedAt} />
              </span>
            ) : null}
          </dd>
          {item.statusNote ? (
            <>
              <dt>Note</dt>
              <dd class="said">{item.statusNote}</dd>
            </>
          ) : null}
          <dt>Assignee</dt>
          <dd>{item.assignee ? (item.assignee.email ?? item.assignee.id) : <span class="muted">nobody</span>}</dd>
          <dt>Brand</dt>
          <dd>{item.brand ? `${item.brand.name ?? item.brand.id} (${item.brand.id})` : 'organization-wide'}</dd>
          <dt>Severity</dt>
          <dd>
            <Severity s={item.severity} />
          </dd>
          <dt>Filed</dt>
          <dd>
            <Time ms={item.createdAt} /> <span class="muted">request {item.requestId}</span>
          </dd>
          <dt>Filed by</dt>
          <dd>
            <Filer f={item} />
          </dd>
          <dt>Expected</dt>
          <dd class="said">{item.expected ?? <span class="muted">not given</span>}</dd>
          <dt>Observed</dt>
          <dd class="said">{item.observed ?? <span class="muted">not given</span>}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="status-heading">
        <h2 id="status-heading">Status</h2>
        <StatusForm item={item} csrf={admin.csrf} state={extra.state} />
        <NoteForm item={item} csrf={admin.csrf} error={extra.noteError} />
        <AssignForm item={item} csrf={admin.csrf} assignees={assignees} />
        {changes.length > 0 ? (
          <ol class="history" aria-label="Status history">
            {changes.map((ch) => (
              <li>
                <Time ms={ch.at} />:{' '}
                {ch.kind === 'status' ? (
                  <>
                    {ch.from} → <strong>{ch.to}</strong>
                  </>
                ) : ch.kind === 'note' ? (
                  'note'
                ) : (
                  'assignment'
                )}{' '}
                by {ch.actorName}
                {ch.actorKind === 'cli' ? ' (admin CLI)' : ''}
                {ch.note ? <div class="said">{ch.note}</div> : null}
              </li>
            ))}
          </ol>
        ) : null}
      </section>
      <section class="card" aria-labelledby="transcript-heading">
        <h2 id="transcript-heading">Conversation</h2>
        <Transcript turns={item.transcript} />
      </section>
      <section class="card" aria-labelledby="queries-heading">
        <h2 id="queries-heading">Attached queries</h2>
        <AttachedQueries queries={item.recentQueries} />
        {/* A run attached here stays here; its row in the history is gone once it is archived. */}
        <RetentionNote days={configOf(c.env).QUERY_LOG_RETENTION_DAYS} />
      </section>
      <section class="card" aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Notifications</h2>
        {deliveries.length === 0 ? (
          <p class="muted">No webhook delivery was attempted (none configured, or not yet).</p>
        ) : (
          <ol class="history" aria-label="Webhook deliveries">
            {deliveries.map((d) => (
              <li>
                Attempt {d.attempt}, <Time ms={d.at} />:{' '}
                {d.outcome === 'delivered' ? 'delivered' : d.outcome === 'gave_up' ? 'failed, gave up' : 'failed, retried later'}
                {d.httpStatus !== null ? ` (HTTP ${d.httpStatus})` : d.error ? ` (${d.error})` : ''}
              </li>
            ))}
          </ol>
        )}
      </section>
    </AdminPage>
  ));
}

function notFound(c: Context<AppEnv>, admin: Admin) {
  return renderPage(c, 404, (nonce) => (
    <AdminPage title="Report not found" nonce={nonce} current="inbox" email={admin.user.reach.email} csrf={admin.csrf}>
      <p>There is no such report among the brands you administer.</p>
      <p>
        <a href={PATH}>Back to the inbox</a>
      </p>
    </AdminPage>
  ));
}

/** What every form of a report's page starts from: the administrator's POST, and the report if they see it. */
interface ReportPost {
  g: Admin & { form: Record<string, string> };
  now: number;
  user: Admin['user'];
  form: Record<string, string>;
  id: string;
  v: Visibility;
  detail: FeedbackDetail;
}

/** `POST /admin/inbox/{id}/{action}`: guarded (session, CSRF, administrator), 404 unless the report is visible. */
function reportPost(admin: Hono<AppEnv>, action: string, handler: (c: Context<AppEnv>, p: ReportPost) => Promise<Response>): void {
  admin.post(`/inbox/:id/${action}`, async (c) => {
    const now = Date.now();
    const guarded = await requireAdminPost(c, now);
    if (!guarded.ok) return guarded.res;
    const g = guarded.value;
    const id = c.req.param('id');
    const v = visibilityOf(g.user.reach);
    const detail = await loadFeedbackDetail(c.env, v, id);
    if (!detail) return notFound(c, g);
    return handler(c, { g, now, user: g.user, form: g.form, id, v, detail });
  });
}

/** The data-issue inbox: `/admin/inbox` (list and filters), `/admin/inbox/{id}` (detail), its status form. */
export function inboxRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/inbox', (c, signedIn) => renderList(c, signedIn));

  adminGet(admin, '/inbox/:id', async (c, signedIn) => {
    const detail = await loadFeedbackDetail(c.env, visibilityOf(signedIn.user.reach), c.req.param('id'));
    if (!detail) return notFound(c, signedIn);
    const notice = NOTICES[c.req.query('notice') ?? ''];
    return renderDetail(c, signedIn, detail, 200, notice ? { notice } : {});
  });

  reportPost(admin, 'status', async (c, { g, now, user, form, id, v, detail }) => {
    const from = detail.item.status;
    if (form.from !== from) {
      return renderDetail(c, g, detail, 409, { notice: NOTICES['status-conflict'] });
    }
    const to = (FEEDBACK_STATUSES as readonly string[]).includes(form.status ?? '') ? (form.status as FeedbackStatus) : null;
    const note = (form.note ?? '').trim() === '' ? null : (form.note ?? '').trim();
    const problem = to === null ? 'Choose the new status.' : statusChangeProblem(from, to, note);
    if (problem !== null || to === null) {
      return renderDetail(c, g, detail, 400, { state: { error: `Not changed: ${problem}.`, status: form.status, note: form.note } });
    }
    const changeId = newId('fsc');
    const changed = await changeFeedbackStatus(c.env, v, {
      id,
      changeId,
      from,
      to,
      note,
      actor: { kind: 'user', id: user.reach.userId, name: user.reach.email },
      now,
    });
    if (changed) {
      const deps = { env: c.env, log: currentScope().log, waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p) };
      enqueueNotification(deps, { kind: 'feedback-status', feedbackRef: id, changeId }, detail.item.orgId);
    }
    const url = `${PATH}/${encodeURIComponent(id)}?notice=${changed ? 'status-changed' : 'status-conflict'}`;
    return c.redirect(url, 303);
  });

  reportPost(admin, 'note', async (c, { g, now, user, form, id, v, detail }) => {
    const note = (form.note ?? '').trim();
    if (note === '' || note.length > NOTE_MAX_CHARS) {
      return renderDetail(c, g, detail, 400, { noteError: `Not added: write a note of 1 to ${NOTE_MAX_CHARS} characters.` });
    }
    if (form.from !== detail.item.status) return renderDetail(c, g, detail, 409, { notice: NOTICES['status-conflict'] });
    const added = await addFeedbackNote(c.env, v, {
      id,
      changeId: newId('fsc'),
      status: detail.item.status,
      note,
      actor: { kind: 'user', id: user.reach.userId, name: user.reach.email },
      now,
    });
    return c.redirect(`${PATH}/${encodeURIComponent(id)}?notice=${added ? 'note-added' : 'status-conflict'}`, 303);
  });

  reportPost(admin, 'assign', async (c, { g, now, user, form, id, v, detail }) => {
    const wanted = form.assignee ?? '';
    const assignee = wanted === '' ? null : ((await listAssignees(c.env, detail.item)).find((a) => a.id === wanted) ?? null);
    if (wanted !== '' && assignee === null) {
      return renderDetail(c, g, detail, 400, { notice: 'Not assigned: that person does not administer this report.' });
    }
    await assignFeedback(c.env, v, {
      id,
      changeId: newId('fsc'),
      assignee,
      actor: { kind: 'user', id: user.reach.userId, name: user.reach.email },
      now,
    });
    return c.redirect(`${PATH}/${encodeURIComponent(id)}?notice=assigned`, 303);
  });
}
