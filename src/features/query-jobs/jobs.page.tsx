import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { visibilityOf } from '../../auth/ownership';
import { currentScope } from '../../context';
import { adminGet, requireAdminPost } from '../../web/guards';
import { AdminPage, MessagePage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { ConsoleCss, ListCard, type ListColumn } from '../../web/console-parts';
import { count, formatBytes } from '../keys/units';
import { isLive, listVisibleJobs, visibleJob, type JobRow } from './job-store';
import { cancelJobRow } from './long-run';

/**
 * The console's long queries: `/admin/jobs`, the running and recent long jobs (REST async jobs, pending cursors) an
 * administrator may see (the query history's rule), with who started them, the brand, elapsed time, bytes so far and
 * how each ended; a running one can be cancelled (its bill is settled as for a cancel by its owner). Linked from the
 * query history, which also records how each long run ended (its `async_job_id`).
 */

const PATH = '/admin/jobs';
const LIMIT = 100;

const JobRowView: FC<{ j: JobRow; now: number; csrf: string }> = ({ j, now, csrf }) => (
  <tr id={`job-${j.id}`}>
    <td data-label="Started">
      <Time ms={j.created_at} />
      <div class="muted">
        {j.transport === 'mcp' ? 'MCP' : 'REST'} · {j.id}
      </div>
    </td>
    <td data-label="Caller">
      {j.principal_kind === 'key' ? 'API key' : 'assistant connection'} {j.principal_id}
    </td>
    <td data-label="Brand">{j.brand_id}</td>
    <td data-label="Query">
      <pre class="sql">{j.sql}</pre>
    </td>
    <td data-label="Status">
      {j.status}
      {j.error_message ? <div class="error-message">{j.error_message}</div> : null}
    </td>
    <td data-label="Elapsed" class="num">
      {count(Math.round(((j.ended_at ?? now) - j.created_at) / 1000))} s
    </td>
    <td data-label="Bytes" class="num">
      {j.bytes_billed !== null
        ? `${formatBytes(j.bytes_billed)} billed`
        : j.bytes_processed !== null
          ? `${formatBytes(j.bytes_processed)} so far`
          : '–'}
    </td>
    <td data-label="Action">
      {j.status === 'running' ? (
        <form method="post" action={`${PATH}/${j.id}/cancel`}>
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit">Cancel</button>
        </form>
      ) : null}
    </td>
  </tr>
);

const JOB_COLUMNS: ListColumn[] = [
  { label: 'Started' },
  { label: 'Caller' },
  { label: 'Brand' },
  { label: 'Query' },
  { label: 'Status' },
  { label: 'Elapsed', num: true },
  { label: 'Bytes', num: true },
  { label: 'Action' },
];

export function jobsRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/jobs', async (c, signedIn) => {
    const now = Date.now();
    const jobs = await listVisibleJobs(c.env, visibilityOf(signedIn.user.reach), LIMIT);
    const running = jobs.filter(isLive).length;
    return renderPage(c, 200, (nonce) => (
      <AdminPage title="Long queries" nonce={nonce} current="history" email={signedIn.user.reach.email} csrf={signedIn.csrf}>
        <ConsoleCss nonce={nonce} />
        <ListCard
          id="jobs"
          title={`${running} running, ${jobs.length - running} recent`}
          before={
            <p class="muted">
              Queries that outlived their request (REST <code>Prefer: respond-async</code>, MCP runs past their wait), newest {LIMIT}. How
              each ended is also in the <a href="/admin/history">query history</a>.
            </p>
          }
          columns={JOB_COLUMNS}
          count={jobs.length}
          empty="No long queries."
          tableClass="runs"
        >
          {jobs.map((j) => (
            <JobRowView j={j} now={now} csrf={signedIn.csrf} />
          ))}
        </ListCard>
      </AdminPage>
    ));
  });

  admin.post('/jobs/:jobId/cancel', async (c) => {
    const g = await requireAdminPost(c, Date.now());
    if (!g.ok) return g.res;
    const row = await visibleJob(c.env, visibilityOf(g.value.user.reach), c.req.param('jobId'));
    if (!row) {
      return renderPage(c, 404, (nonce) => (
        <MessagePage nonce={nonce} title="No such long query">
          <p>
            It does not exist or is not yours to see. <a href={PATH}>Back to long queries</a>
          </p>
        </MessagePage>
      ));
    }
    const { requestId, log } = currentScope();
    await cancelJobRow(c.env, row, requestId, log);
    return c.redirect(PATH, 303);
  });
}
