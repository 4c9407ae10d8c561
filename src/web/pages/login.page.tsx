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

export interface SignInPageProps {
  nonce: string;
  action: string;
  csrf: string;
  error?: string;
  email?: string;
  /** Shown above the form when signing in to approve an assistant. */
  intro?: Child;
}

/** The sign-in form, shared by /admin/login and /authorize (the OAuth sign-in is the admin sign-in). */
export const SignInPage: FC<SignInPageProps> = ({ nonce, action, csrf, error, email, intro }) => (
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

const signInPage = async (c: Context<AppEnv>, status: 200 | 400 | 401 | 403 | 429, error?: string, email?: string) => {
  const csrf = await loginCsrfToken(c);
  return renderPage(c, status, (nonce) => <SignInPage nonce={nonce} action="/admin/login" csrf={csrf} error={error} email={email} />);
};

/** `/admin/login` (GET, POST) and `/admin/logout` (POST). */
export function loginRoutes(admin: Hono<AppEnv>): void {
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
}
