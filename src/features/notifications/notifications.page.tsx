import { currentScope } from '../../context';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../../app-env';
import { copyScript } from '../../web/copy-button';
import { putFlash, takeFlash } from '../../web/flash';
import { adminGet, requireAdminPost, type Admin } from '../../web/guards';
import { AdminPage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { sendTestNotification } from './notifications';
import { consoleOrigin } from '../../web/console-link';
import { clearOrgWebhook, orgWebhookStatuses, setOrgWebhook, WEBHOOK_FORMATS, webhookUrlProblem, type WebhookFormat } from './org-webhook';

/**
 * `/admin/notifications`: where an organization's data-issue events go. An administrator of a whole organization
 * sets its own webhook (the URL is sealed and never shown again; the signing secret is shown once), clears it, and
 * sends a signed test event to whichever webhook the org's reports would reach. Reached from the Data issues page.
 */
const PATH = '/admin/notifications';

const SecretFlash = z.object({ orgId: z.string(), secret: z.string() });
const TestFlash = z.object({ orgId: z.string(), ok: z.boolean(), text: z.string() });

const NOTICES: Record<string, string> = {
  cleared: "The organization's webhook was removed; its events go to the deployment's webhook, if one is set.",
};

const COPY_SCRIPT = copyScript({ button: 'copy-secret', field: 'webhook-secret', status: 'copy-status' }, 'secret');

async function render(c: Context<AppEnv>, admin: Admin, status: 200 | 400, extra: { error?: { orgId: string; text: string } } = {}) {
  const { user } = admin;
  const orgIds = user.reach.orgIds;
  const [statuses, secret, test] = await Promise.all([
    orgWebhookStatuses(c.env, orgIds),
    takeFlash(c, user.session, 'webhook-secret', SecretFlash),
    takeFlash(c, user.session, 'webhook-test', TestFlash),
  ]);
  const deploymentSet = (c.env.FEEDBACK_WEBHOOK_URL?.trim() ?? '') !== '';
  const origin = consoleOrigin(c.env);
  const notice = NOTICES[c.req.query('notice') ?? ''];
  return renderPage(c, status, (nonce) => (
    <AdminPage title="Notifications" nonce={nonce} current="inbox" email={user.reach.email} csrf={admin.csrf} notice={notice}>
      <p>
        <a href="/admin/inbox">← Data issues</a>
      </p>
      <section class="card" aria-labelledby="how-heading">
        <h2 id="how-heading">How notifications work</h2>
        <p>
          When a report is filed, or its status changes on these pages, a signed POST goes to the organization's webhook, or else to the
          deployment's. The receiver checks the <code>webhook-signature</code> header with the secret (docs/admin.md, Notifications).
        </p>
        <dl class="facts">
          <dt>Deployment webhook</dt>
          <dd>{deploymentSet ? 'configured (FEEDBACK_WEBHOOK_URL)' : 'not configured'}</dd>
          <dt>Links to reports</dt>
          <dd>{origin ? <code>{origin}</code> : <span class="muted">none: CONSOLE_ORIGIN is not set, so events carry no link</span>}</dd>
        </dl>
      </section>
      {orgIds.length === 0 ? (
        <section class="card">
          <p class="muted">Only an administrator of a whole organization sets its webhook; you administer single brands.</p>
        </section>
      ) : (
        orgIds.map((orgId) => {
          const s = statuses.find((x) => x.orgId === orgId);
          const err = extra.error?.orgId === orgId ? extra.error.text : undefined;
          const errId = `webhook-error-${orgId}`;
          return (
            <section class="card" aria-labelledby={`org-${orgId}`}>
              <h2 id={`org-${orgId}`}>
                Organization <code>{orgId}</code>
              </h2>
              <p>
                {s ? (
                  <>
                    Its own webhook is set ({s.format}), by {s.updatedBy}, <Time ms={s.updatedAt} />. The URL is stored sealed and not
                    shown.
                  </>
                ) : (
                  <span class="muted">
                    No webhook of its own: its events go to the deployment's webhook{deploymentSet ? '' : ' (none is set)'}.
                  </span>
                )}
              </p>
              {secret?.orgId === orgId ? (
                <div class="warning" role="note">
                  <p>Copy the signing secret now: it is shown only this once. Give it to the receiver to verify deliveries.</p>
                  <label for="webhook-secret">Signing secret</label>
                  <input id="webhook-secret" readonly value={secret.secret} autocomplete="off" spellcheck={false} />
                  <div class="actions">
                    <button type="button" id="copy-secret">
                      Copy secret
                    </button>
                  </div>
                  <p id="copy-status" role="status" aria-live="polite"></p>
                  <script nonce={nonce} dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
                </div>
              ) : null}
              {test?.orgId === orgId ? (
                <p class={test.ok ? 'notice' : 'alert'} role="status">
                  {test.text}
                </p>
              ) : null}
              <form method="post" action={`${PATH}/${encodeURIComponent(orgId)}/test`} class="inline">
                <input type="hidden" name="csrf" value={admin.csrf} />
                <button type="submit" class="secondary">
                  Send a test
                </button>
              </form>
              <form method="post" action={`${PATH}/${encodeURIComponent(orgId)}`}>
                <input type="hidden" name="csrf" value={admin.csrf} />
                {err ? (
                  <p class="alert" role="alert" id={errId}>
                    {err}
                  </p>
                ) : null}
                <label for={`url-${orgId}`}>
                  {s ? 'Replace the webhook URL' : 'Webhook URL'} <span class="hint">https://; a new signing secret is made each time</span>
                </label>
                <input
                  id={`url-${orgId}`}
                  name="url"
                  type="url"
                  required
                  autocomplete="off"
                  aria-invalid={err ? 'true' : undefined}
                  aria-describedby={err ? errId : undefined}
                />
                <label for={`format-${orgId}`}>Body</label>
                <select id={`format-${orgId}`} name="format">
                  <option value="json">JSON (signed)</option>
                  <option value="slack">Slack incoming webhook</option>
                </select>
                <div class="actions">
                  <button type="submit">Save webhook</button>
                </div>
              </form>
              {s ? (
                <form method="post" action={`${PATH}/${encodeURIComponent(orgId)}/clear`}>
                  <input type="hidden" name="csrf" value={admin.csrf} />
                  <button type="submit" class="danger">
                    Remove the organization's webhook
                  </button>
                </form>
              ) : null}
            </section>
          );
        })
      )}
    </AdminPage>
  ));
}

/** The org in the path, when the signed-in administrator administers it as a whole; else null. */
function ownOrg(admin: Admin, orgId: string): string | null {
  return admin.user.reach.orgIds.includes(orgId) ? orgId : null;
}

function refused(c: Context<AppEnv>, admin: Admin) {
  return render(c, admin, 400, { error: { orgId: '', text: 'You do not administer that organization as a whole.' } });
}

export function notificationsRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/notifications', (c, signedIn) => render(c, signedIn, 200));

  admin.post('/notifications/:org', async (c) => {
    const now = Date.now();
    const g = await requireAdminPost(c, now);
    if (!g.ok) return g.res;
    const orgId = ownOrg(g.value, c.req.param('org'));
    if (orgId === null) return refused(c, g.value);
    const url = (g.value.form.url ?? '').trim();
    const format = (WEBHOOK_FORMATS as readonly string[]).includes(g.value.form.format ?? '')
      ? (g.value.form.format as WebhookFormat)
      : 'json';
    const problem = webhookUrlProblem(url);
    if (problem !== null) return render(c, g.value, 400, { error: { orgId, text: `Not saved: ${problem}.` } });
    if (!c.env.CREDENTIALS_KEY) {
      return render(c, g.value, 400, { error: { orgId, text: 'Not saved: the deployment has no CREDENTIALS_KEY to seal the URL with.' } });
    }
    const { secret } = await setOrgWebhook(c.env, orgId, { url, format }, g.value.user.reach.email, now);
    await putFlash(c, g.value.user.session, 'webhook-secret', { orgId, secret });
    return c.redirect(PATH, 303);
  });

  admin.post('/notifications/:org/clear', async (c) => {
    const g = await requireAdminPost(c, Date.now());
    if (!g.ok) return g.res;
    const orgId = ownOrg(g.value, c.req.param('org'));
    if (orgId === null) return refused(c, g.value);
    await clearOrgWebhook(c.env, orgId);
    return c.redirect(`${PATH}?notice=cleared`, 303);
  });

  admin.post('/notifications/:org/test', async (c) => {
    const g = await requireAdminPost(c, Date.now());
    if (!g.ok) return g.res;
    const orgId = ownOrg(g.value, c.req.param('org'));
    if (orgId === null) return refused(c, g.value);
    const r = await sendTestNotification(c.env, orgId, currentScope().log);
    const text =
      r === null
        ? 'Nothing sent: no webhook is set for this organization or the deployment.'
        : r.ok
          ? `Test delivered (HTTP ${r.httpStatus}, ${r.durationMs} ms).`
          : `Test not delivered: ${r.error}.`;
    await putFlash(c, g.value.user.session, 'webhook-test', { orgId, ok: r?.ok ?? false, text });
    return c.redirect(PATH, 303);
  });
}
