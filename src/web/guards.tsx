import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../app-env';
import { currentScope } from '../context';
import { describeError } from '../errors';
import { isAdministrator } from '../auth/oauth-principal';
import { checkSessionCsrf, sessionCsrfToken } from './csrf';
import { currentUser, type SignedIn } from './current-user';
import { readForm } from './form';
import { MessagePage, NotAdminMessage, UserBar } from './layout';
import { renderPage } from './render';
import { formReturnPath, loginPath, requestPath, signInReturnPath } from './return-path';

/** Forms on these pages are small; anything bigger is refused before it is read. */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * What every HTML sub-app (/admin, /authorize) shares: a small body limit, a same-origin check on POST (defence in
 * depth next to the CSRF tokens: browsers send Origin on every cross-site POST), and an HTML error page that shows
 * the request id, the cause going to the log only.
 */
export function useHtmlDefaults(app: Hono<AppEnv>): void {
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: (c) =>
        renderPage(c, 413, (nonce) => (
          <MessagePage nonce={nonce} title="Form too large">
            <p>That form was larger than this page accepts.</p>
          </MessagePage>
        )),
    }),
  );
  app.use('*', async (c, next) => {
    const origin = c.req.header('origin');
    if (c.req.method === 'POST' && origin !== undefined && origin !== new URL(c.req.url).origin) {
      return formExpired(c, 'This form was sent from another site and was refused.');
    }
    return next();
  });
  app.onError((err, c) => {
    const { log, requestId } = currentScope();
    log.error('page failed', { path: c.req.path, internal: describeError(err) });
    return renderPage(c, 500, (nonce) => (
      <MessagePage nonce={nonce} title="Something went wrong">
        <p>
          The page could not be shown. If this keeps happening, quote request id <code>{requestId}</code> to support.
        </p>
      </MessagePage>
    ));
  });
}

/** 403 for a form whose CSRF token (or origin) did not check out. */
export function formExpired(c: Context<AppEnv>, message = 'This form expired or was not sent from this site.') {
  return renderPage(c, 403, (nonce) => (
    <MessagePage nonce={nonce} title="Form refused">
      <p>{message}</p>
      <p>Go back, reload the page and try again.</p>
    </MessagePage>
  ));
}

/** 403 for a signed-in user who administers nothing; signing out from it comes back to this page after the next sign-in. */
export async function notAdminPage(c: Context<AppEnv>, user: SignedIn) {
  const csrf = await sessionCsrfToken(c, user.session);
  const next = c.req.method === 'GET' ? (signInReturnPath(requestPath(c.req.url)) ?? undefined) : undefined;
  return renderPage(c, 403, (nonce) => (
    <MessagePage nonce={nonce} title="No administrator access" header={<UserBar email={user.reach.email} csrf={csrf} next={next} />}>
      <NotAdminMessage email={user.reach.email} />
    </MessagePage>
  ));
}

/** A signed-in administrator and the CSRF token for the page's forms. */
export interface Admin {
  user: SignedIn;
  csrf: string;
}

export type Guarded<T> = { ok: true; value: T } | { ok: false; res: Response | Promise<Response> };

/**
 * GET of an administration page: the signed-in administrator, or the redirect / refusal to answer instead. Without a
 * session, the sign-in page is told to come back here (`next`, src/web/return-path.ts), so a link followed from an
 * assistant's citation or a notification lands on its page after signing in.
 */
export async function requireAdmin(c: Context<AppEnv>, now: number): Promise<Guarded<Admin>> {
  const user = await currentUser(c, now);
  if (!user) return { ok: false, res: c.redirect(loginPath(signInReturnPath(requestPath(c.req.url))), 303) };
  if (!isAdministrator(user.reach)) return { ok: false, res: notAdminPage(c, user) };
  return { ok: true, value: { user, csrf: await sessionCsrfToken(c, user.session) } };
}

/**
 * A POST from a signed-in administrator with a valid CSRF token (and its form), or the response that refuses it.
 * Without a session, the sign-in page is told to come back to the page the form was on (formReturnPath).
 */
export async function requireAdminPost(c: Context<AppEnv>, now: number): Promise<Guarded<Admin & { form: Record<string, string> }>> {
  const user = await currentUser(c, now);
  if (!user) return { ok: false, res: c.redirect(loginPath(formReturnPath(c.req.header('referer'), c.req.url)), 303) };
  const form = await readForm(c);
  if (!(await checkSessionCsrf(c, user.session, form.csrf))) return { ok: false, res: formExpired(c) };
  if (!isAdministrator(user.reach)) return { ok: false, res: notAdminPage(c, user) };
  return { ok: true, value: { user, form, csrf: await sessionCsrfToken(c, user.session) } };
}

/** A GET administration page: `handler` runs for a signed-in administrator; anyone else gets the sign-in redirect or refusal. */
export function adminGet<P extends string>(
  app: Hono<AppEnv>,
  path: P,
  handler: (c: Context<AppEnv, P>, signedIn: Admin) => Response | Promise<Response>,
): void {
  app.get(path, async (c) => {
    const g = await requireAdmin(c, Date.now());
    return g.ok ? handler(c, g.value) : g.res;
  });
}
