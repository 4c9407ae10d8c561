import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env';
import { defaultLimits } from '../auth/api-keys';
import { isAdministrator } from '../auth/oauth-principal';
import { ApiError } from '../errors';
import { oauthHelpers } from '../oauth/provider';
import { listManagedAssistants, revokeManagedAssistant } from './assistants';
import { currentUser, handleSignIn, readForm, type SignedIn } from './current-user';
import { formExpired, useHtmlDefaults } from './guards';
import { loadKeyUsage } from './key-usage';
import {
  createManagedKey,
  CreateKeyFormSchema,
  firstFormError,
  KEY_LIMIT_FIELD_LABELS,
  keyScopeChoices,
  KeyLimitsFormSchema,
  LIMIT_FIELD_LABELS,
  listManagedKeys,
  revokeManagedKey,
  updateManagedKeyLimits,
} from './keys';
import { checkSessionCsrf, destroySession, loginCsrfToken, readSession, sessionCsrfToken } from './session';
import { DashboardPage, KeyCreatedPage, MessagePage, NotAdminMessage, SignInPage, UserBar, type DashboardProps } from './views/pages';
import { renderPage } from './views/render';

/** Fixed texts for `?notice=` after a redirect; the parameter only picks one, it is never echoed. */
const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked. Requests with it are refused from now on.',
  'key-not-found': 'That key was not found or was already revoked.',
  'key-limits-saved': "The key's limits were saved. Its next request runs under them.",
  'assistant-revoked': 'The assistant was disconnected. It must be approved again to reconnect.',
  'assistant-not-found': 'That connection was not found or was already revoked.',
};

const signInPage = async (c: Context<AppEnv>, status: 200 | 400 | 401 | 403 | 429, error?: string, email?: string) => {
  const csrf = await loginCsrfToken(c);
  return renderPage(c, status, (nonce) => <SignInPage nonce={nonce} action="/admin/login" csrf={csrf} error={error} email={email} />);
};

const notAdminPage = async (c: Context<AppEnv>, user: SignedIn) => {
  const csrf = await sessionCsrfToken(c, user.session);
  return renderPage(c, 403, (nonce) => (
    <MessagePage nonce={nonce} title="No administrator access" header={<UserBar email={user.reach.email} csrf={csrf} />}>
      <NotAdminMessage email={user.reach.email} />
    </MessagePage>
  ));
};

async function renderDashboard(
  c: Context<AppEnv>,
  user: SignedIn,
  status: 200 | 400 | 403,
  extra: Pick<DashboardProps, 'notice' | 'error' | 'form' | 'limitsEdit'> = {},
) {
  const defaults = defaultLimits(c.env);
  const now = Date.now();
  const [csrf, { keys, usage }, scopes, assistants] = await Promise.all([
    sessionCsrfToken(c, user.session),
    listManagedKeys(c.env, user.reach).then(async (keys) => ({ keys, usage: await loadKeyUsage(c.env, keys, defaults, now, c.get('log')) })),
    keyScopeChoices(c.env, user.reach),
    listManagedAssistants(c.env, oauthHelpers(c.env, c.req.url), user.reach),
  ]);
  return renderPage(c, status, (nonce) => (
    <DashboardPage
      nonce={nonce}
      email={user.reach.email}
      csrf={csrf}
      keys={keys}
      scopes={scopes}
      assistants={assistants}
      defaults={defaults}
      usage={usage}
      {...extra}
    />
  ));
}

type Guarded = { ok: true; user: SignedIn; form: Record<string, string> } | { ok: false; res: Response | Promise<Response> };

/** A POST from a signed-in administrator with a valid CSRF token, or the response that refuses it. */
async function guardPost(c: Context<AppEnv>, now: number): Promise<Guarded> {
  const user = await currentUser(c, now);
  if (!user) return { ok: false, res: c.redirect('/admin/login', 303) };
  const form = await readForm(c);
  if (!(await checkSessionCsrf(c, user.session, form.csrf))) return { ok: false, res: formExpired(c) };
  if (!isAdministrator(user.reach)) return { ok: false, res: notAdminPage(c, user) };
  return { ok: true, user, form };
}

/** `/admin`: sign in and out, API keys (create, list with usage, change limits, revoke) and connected assistants (list, revoke). */
export function createAdminRoutes(): Hono<AppEnv> {
  const admin = new Hono<AppEnv>();
  useHtmlDefaults(admin);

  admin.get('/login', async (c) => {
    if (await currentUser(c, Date.now())) return c.redirect('/admin', 303);
    return signInPage(c, 200);
  });

  admin.post('/login', async (c) => {
    const form = await readForm(c);
    const outcome = await handleSignIn(c, form, Date.now());
    if (outcome.ok) return c.redirect('/admin', 303);
    if (outcome.retryAfterSeconds !== undefined) c.header('retry-after', String(outcome.retryAfterSeconds));
    return signInPage(c, outcome.status, outcome.error, form.email);
  });

  admin.post('/logout', async (c) => {
    const session = await readSession(c, Date.now());
    const form = await readForm(c);
    if (session && !(await checkSessionCsrf(c, session, form.csrf))) return formExpired(c);
    await destroySession(c, session);
    // Only back to an authorization request (signing out from the consent screen to switch accounts).
    const next = form.next;
    return c.redirect(next && next.startsWith('/authorize?') ? next : '/admin/login', 303);
  });

  admin.get('/', async (c) => {
    const user = await currentUser(c, Date.now());
    if (!user) return c.redirect('/admin/login', 303);
    if (!isAdministrator(user.reach)) return notAdminPage(c, user);
    const notice = NOTICES[c.req.query('notice') ?? ''];
    return renderDashboard(c, user, 200, notice ? { notice } : {});
  });

  admin.post('/keys', async (c) => {
    const now = Date.now();
    const g = await guardPost(c, now);
    if (!g.ok) return g.res;
    const parsed = CreateKeyFormSchema.safeParse(g.form);
    const keep = { name: g.form.name, scope: g.form.scope, dailyQueries: g.form.dailyQueries, dailyGiB: g.form.dailyGiB, maxGiB: g.form.maxGiB };
    if (!parsed.success) {
      const { message } = firstFormError(parsed.error, { name: 'Name', scope: 'Reaches', ...LIMIT_FIELD_LABELS });
      return renderDashboard(c, g.user, 400, { error: message, form: keep });
    }
    let created;
    try {
      created = await createManagedKey(c.env, g.user.reach, parsed.data, now);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'FORBIDDEN_BRAND') {
        return renderDashboard(c, g.user, 403, { error: 'You do not administer the organization or brand you chose.', form: keep });
      }
      throw err;
    }
    const csrf = await sessionCsrfToken(c, g.user.session);
    const scopeLabel = `${created.key.scope.kind === 'org' ? 'every brand of' : 'brand'} ${created.key.scope.name ?? created.key.scope.id}`;
    return renderPage(c, 201, (nonce) => (
      <KeyCreatedPage nonce={nonce} email={g.user.reach.email} csrf={csrf} keyName={created.key.name} scopeLabel={scopeLabel} secret={created.secret} />
    ));
  });

  admin.post('/keys/:id/revoke', async (c) => {
    const now = Date.now();
    const g = await guardPost(c, now);
    if (!g.ok) return g.res;
    const revoked = await revokeManagedKey(c.env, g.user.reach, c.req.param('id'), now);
    return c.redirect(`/admin?notice=${revoked ? 'key-revoked' : 'key-not-found'}`, 303);
  });

  admin.post('/keys/:id/limits', async (c) => {
    const g = await guardPost(c, Date.now());
    if (!g.ok) return g.res;
    const keyId = c.req.param('id');
    const parsed = KeyLimitsFormSchema.safeParse(g.form);
    if (!parsed.success) {
      const { field, message } = firstFormError(parsed.error, KEY_LIMIT_FIELD_LABELS);
      const values = { dailyQueries: g.form.dailyQueries, dailyGiB: g.form.dailyGiB, maxGiB: g.form.maxGiB };
      return renderDashboard(c, g.user, 400, { limitsEdit: { keyId, field, error: `Not saved. ${message}`, values } });
    }
    const saved = await updateManagedKeyLimits(c.env, g.user.reach, keyId, parsed.data);
    // Back to the key's row: on a long list the saved limits are in view.
    return c.redirect(saved ? `/admin?notice=key-limits-saved#key-${encodeURIComponent(keyId)}` : '/admin?notice=key-not-found', 303);
  });

  admin.post('/assistants/revoke', async (c) => {
    const g = await guardPost(c, Date.now());
    if (!g.ok) return g.res;
    const { userId, grantId } = g.form;
    const revoked =
      userId !== undefined && grantId !== undefined && userId !== '' && grantId !== ''
        ? await revokeManagedAssistant(c.env, oauthHelpers(c.env, c.req.url), g.user.reach, { userId, grantId })
        : false;
    return c.redirect(`/admin?notice=${revoked ? 'assistant-revoked' : 'assistant-not-found'}`, 303);
  });

  return admin;
}
