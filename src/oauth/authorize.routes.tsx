import { AuthorizationError, CimdFetchError, type AuthRequest, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env';
import { isAdministrator } from '../auth/oauth-principal';
import type { GrantMetadata } from '../admin/assistants';
import { currentUser, handleSignIn, readForm, type SignedIn } from '../admin/current-user';
import { formExpired, useHtmlDefaults } from '../admin/guards';
import { checkSessionCsrf, loginCsrfToken, sessionCsrfToken } from '../admin/session';
import { MessagePage, NotAdminMessage, SignInPage, UserBar } from '../admin/views/pages';
import { renderPage } from '../admin/views/render';
import { ConsentPage } from './consent-page';
import { encodeGrantUserId } from './grant-user';
import type { ConnectionProps } from './mcp-api';
import { OAUTH_SCOPE, oauthHelpers } from './provider';

/** This authorization request's own path and query (where sign-in and sign-out come back to). */
function selfPath(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

function problemPage(c: Context<AppEnv>, status: 400 | 401, title: string, message: string) {
  return renderPage(c, status, (nonce) => (
    <MessagePage nonce={nonce} title={title}>
      <p>{message}</p>
      <p class="muted">Start connecting again from your assistant.</p>
    </MessagePage>
  ));
}

/**
 * A request the library refused: back to the client when its redirect URI is validated (error, state, iss), else
 * a page here, never a redirect to an unverified URI.
 */
function authorizationProblem(c: Context<AppEnv>, err: unknown) {
  if (err instanceof AuthorizationError && err.redirectTo) return c.redirect(err.redirectTo, 302);
  if (err instanceof AuthorizationError) return problemPage(c, 400, 'This connection request is not valid', err.description);
  if (err instanceof CimdFetchError) {
    c.get('log').warn('client metadata document unavailable', { reason: err.reason, detail: err.detail });
    return problemPage(c, 400, 'This app could not be verified', 'Its client metadata document could not be fetched or is invalid.');
  }
  throw err;
}

async function parseRequest(c: Context<AppEnv>, helpers: OAuthHelpers): Promise<{ ok: true; authRequest: AuthRequest } | { ok: false; res: Response | Promise<Response> }> {
  try {
    return { ok: true, authRequest: await helpers.parseAuthRequest(c.req.raw) };
  } catch (err) {
    return { ok: false, res: authorizationProblem(c, err) };
  }
}

async function signInPage(c: Context<AppEnv>, clientName: string, status: 200 | 400 | 401 | 403 | 429, error?: string, email?: string) {
  const csrf = await loginCsrfToken(c);
  return renderPage(c, status, (nonce) => (
    <SignInPage
      nonce={nonce}
      action={selfPath(c)}
      csrf={csrf}
      error={error}
      email={email}
      intro={
        <p>
          <strong>{clientName}</strong> wants to connect to the Warehouse Query API. Sign in with your administrator account to
          review what it will be able to reach.
        </p>
      }
    />
  ));
}

async function refusalPage(c: Context<AppEnv>, user: SignedIn) {
  const csrf = await sessionCsrfToken(c, user.session);
  return renderPage(c, 403, (nonce) => (
    <MessagePage nonce={nonce} title="Only administrators can connect assistants" header={<UserBar email={user.reach.email} csrf={csrf} next={selfPath(c)} />}>
      <NotAdminMessage email={user.reach.email} />
    </MessagePage>
  ));
}

/** GET /authorize: validate the request, then sign-in, refusal, or the consent screen. */
async function showAuthorize(c: Context<AppEnv>) {
  const helpers = oauthHelpers(c.env, c.req.url);
  const parsed = await parseRequest(c, helpers);
  if (!parsed.ok) return parsed.res;
  let details;
  try {
    details = await helpers.describeConsent(parsed.authRequest);
  } catch (err) {
    return authorizationProblem(c, err);
  }
  const user = await currentUser(c, Date.now());
  if (!user) return signInPage(c, details.clientName, 200);
  if (!isAdministrator(user.reach)) return refusalPage(c, user);
  // Describe first: a failed client lookup then leaves nothing in KV.
  const consent = await helpers.beginConsent(parsed.authRequest);
  const csrf = await sessionCsrfToken(c, user.session);
  return renderPage(
    c,
    200,
    (nonce) => (
      <ConsentPage nonce={nonce} details={details} handle={consent.handle} csrf={csrf} email={user.reach.email} brands={user.reach.brands} next={selfPath(c)} />
    ),
    { formActionSelf: false, headers: consent.headers },
  );
}

/** POST /authorize with intent=signin: the sign-in form shown in place of consent. */
async function postSignIn(c: Context<AppEnv>, form: Record<string, string>) {
  const helpers = oauthHelpers(c.env, c.req.url);
  const parsed = await parseRequest(c, helpers);
  if (!parsed.ok) return parsed.res;
  const outcome = await handleSignIn(c, form, Date.now());
  if (outcome.ok) return c.redirect(selfPath(c), 303);
  let clientName = parsed.authRequest.clientId;
  try {
    clientName = (await helpers.describeConsent(parsed.authRequest)).clientName;
  } catch {
    // The GET that showed this form described the client; its name is only decoration on a retry.
  }
  if (outcome.retryAfterSeconds !== undefined) c.header('retry-after', String(outcome.retryAfterSeconds));
  return signInPage(c, clientName, outcome.status, outcome.error, form.email);
}

/** POST /authorize with intent=consent: Allow completes the grant, Deny returns access_denied to the client. */
async function postConsent(c: Context<AppEnv>, form: Record<string, string>) {
  const user = await currentUser(c, Date.now());
  if (!user) return problemPage(c, 401, 'You were signed out', 'Your session ended before you answered.');
  if (!(await checkSessionCsrf(c, user.session, form.csrf))) return formExpired(c);
  if (!isAdministrator(user.reach)) return refusalPage(c, user);
  const helpers = oauthHelpers(c.env, c.req.url);
  const handle = form.handle ?? '';
  try {
    if (form.decision !== 'allow') {
      const denied = await helpers.denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    // Every connection gets the one read-only scope, whatever the client asked for.
    const approved = await helpers.approveConsent(c.req.raw, handle, { scope: [OAUTH_SCOPE] });
    let metadata: GrantMetadata = {};
    try {
      const d = await helpers.describeConsent(approved.request);
      metadata = { clientName: d.clientName.slice(0, 200), redirectHost: d.redirectHost.slice(0, 300) };
    } catch (err) {
      c.get('log').warn('client description failed after approval', { internal: String(err) });
    }
    const props: ConnectionProps = { kind: 'oauth', userId: user.reach.userId };
    const { redirectTo } = await helpers.completeAuthorization({
      request: approved.request,
      userId: encodeGrantUserId(user.reach.userId),
      metadata,
      scope: approved.request.scope,
      props,
    });
    approved.headers.set('location', redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (err) {
    if (err instanceof AuthorizationError) {
      return problemPage(c, 400, 'This approval page expired', 'It was already used, opened in another browser, or is more than ten minutes old.');
    }
    throw err;
  }
}

/** `/authorize`: the OAuth authorization endpoint (sign-in with the admin login, then consent). */
export function createAuthorizeRoutes(): Hono<AppEnv> {
  const authorize = new Hono<AppEnv>();
  useHtmlDefaults(authorize);
  authorize.get('/', (c) => showAuthorize(c));
  authorize.post('/', async (c) => {
    const form = await readForm(c);
    if (form.intent === 'signin') return postSignIn(c, form);
    if (form.intent === 'consent') return postConsent(c, form);
    return formExpired(c);
  });
  return authorize;
}
