import type { Context, Hono } from 'hono';
import type { Child, FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { checkSessionCsrf, loginCsrfToken } from '../csrf';
import { currentUser } from '../current-user';
import { readForm } from '../form';
import { formExpired } from '../guards';
import { Layout } from '../layout';
import { renderPage } from '../render';
import { destroySession, readSession } from '../session';
import { handleSignIn } from '../sign-in';
import { LOGIN_PATH, signInReturnPath, signOutDestination } from '../return-path';

export interface SignInPageProps {
  nonce: string;
  action: string;
  csrf: string;
  error?: string;
  email?: string;
  /** Shown above the form when signing in to approve an assistant. */
  intro?: Child;
  /** The page to land on after signing in (signInReturnPath checked it), sent back with the form. */
  next?: string | null;
}

/** The sign-in form, shared by /admin/login and /authorize (the OAuth sign-in is the admin sign-in). */
export const SignInPage: FC<SignInPageProps> = ({ nonce, action, csrf, error, email, intro, next }) => (
  <Layout title="Sign in" nonce={nonce} narrow>
    <section class="card">
      <h1>Sign in</h1>
      {intro ?? <p class="muted">Sign in with your administrator account to manage API keys and connected assistants.</p>}
      {error ? (
        <p class="alert" role="alert" id="signin-error">
          {error}
        </p>
      ) : null}
      <form method="post" action={action}>
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="intent" value="signin" />
        {next ? <input type="hidden" name="next" value={next} /> : null}
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={email ?? ''}
          aria-describedby={error ? 'signin-error' : undefined}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit">Sign in</button>
        </div>
      </form>
    </section>
  </Layout>
);

const signInPage = async (c: Context<AppEnv>, status: 200 | 400 | 401 | 403 | 429, next: string | null, error?: string, email?: string) => {
  const csrf = await loginCsrfToken(c);
  return renderPage(c, status, (nonce) => (
    <SignInPage nonce={nonce} action={LOGIN_PATH} csrf={csrf} error={error} email={email} next={next} />
  ));
};

/**
 * `/admin/login` (GET, POST) and `/admin/logout` (POST). `next` (query on GET, form field on POST) is the page to
 * land on after signing in, checked each time by signInReturnPath: a console page of this origin, or the console's
 * home.
 */
export function loginRoutes(admin: Hono<AppEnv>): void {
  admin.get('/login', async (c) => {
    const next = signInReturnPath(c.req.query('next'));
    if (await currentUser(c, Date.now())) return c.redirect(next ?? '/admin', 303);
    return signInPage(c, 200, next);
  });

  admin.post('/login', async (c) => {
    const form = await readForm(c);
    const next = signInReturnPath(form.next);
    const outcome = await handleSignIn(c, form, Date.now());
    if (outcome.ok) return c.redirect(next ?? '/admin', 303);
    if (outcome.retryAfterSeconds !== undefined) c.header('retry-after', String(outcome.retryAfterSeconds));
    return signInPage(c, outcome.status, next, outcome.error, form.email);
  });

  admin.post('/logout', async (c) => {
    const session = await readSession(c, Date.now());
    const form = await readForm(c);
    if (session && !(await checkSessionCsrf(c, session, form.csrf))) return formExpired(c);
    await destroySession(c, session);
    // Back to an authorization request (signing out from the consent screen to switch accounts), or to sign in again
    // on the way to the page signed out from.
    return c.redirect(signOutDestination(form.next), 303);
  });
}
