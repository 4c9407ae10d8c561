import {
  AuthorizationError,
  CimdFetchError,
  type AuthRequest,
  type ConsentDescription,
  type OAuthHelpers,
} from '@cloudflare/workers-oauth-provider';
import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { isAdministrator, type ReachableBrand } from '../../auth/oauth-principal';
import { encodeGrantUserId, type GrantMetadata } from '../../oauth/grant-user';
import type { ConnectionProps } from '../../oauth/mcp-api';
import { OAUTH_SCOPE, oauthHelpers } from '../../oauth/provider';
import { checkSessionCsrf, loginCsrfToken, sessionCsrfToken } from '../csrf';
import { currentUser, type SignedIn } from '../current-user';
import { readForm } from '../form';
import { formExpired } from '../guards';
import { Layout, MessagePage, NotAdminMessage, UserBar } from '../layout';
import { renderPage } from '../render';
import { handleSignIn } from '../sign-in';
import { SignInPage } from './login.page';
import { currentScope } from '../../context';

/**
 * `/authorize`, the OAuth authorization endpoint: the request is validated by the library, the administrator signs in
 * (the admin sign-in) and approves or denies on the consent page below.
 */

export interface ConsentPageProps {
  nonce: string;
  details: ConsentDescription;
  handle: string;
  csrf: string;
  email: string;
  brands: ReachableBrand[];
  /** Where signing out should come back to (this authorization request). */
  next: string;
}

/**
 * The approval screen (MCP authorization best practices): the client's name (verified domain for a metadata-document
 * client, an "unverified" note otherwise), where the tokens go, a warning for a local redirect, what the connection
 * can reach, that it reads the warehouse only, and what it may write (data-issue reports, memories), each a choice
 * the administrator makes here and the connection keeps. Every client-supplied string is escaped by JSX.
 */
export const ConsentPage: FC<ConsentPageProps> = ({ nonce, details, handle, csrf, email, brands, next }) => (
  <Layout title={`Connect ${details.clientName}`} nonce={nonce} header={<UserBar email={email} csrf={csrf} next={next} />} narrow>
    <section class="card">
      <h1>
        Allow <span id="client-name">{details.clientName}</span> to use your data?
      </h1>
      {details.clientDomain ? (
        <p>
          Published by <strong>{details.clientDomain}</strong>.
        </p>
      ) : (
        <p class="muted">This app registered itself; its name is not verified.</p>
      )}
      <p>
        Access will be sent to <strong id="redirect-host">{details.redirectHost}</strong>.
      </p>
      {details.redirectIsLoopback ? (
        <p class="warning" role="note">
          This sends access to an app on your own computer. Continue only if you just started connecting from it.
        </p>
      ) : null}
      <h2>It will be able to</h2>
      <ul>
        <li>
          <strong>Read</strong>: list reports, saved queries and memories, and run read-only <code>SELECT</code> queries. It cannot change
          any warehouse data.
        </li>
        <li>Use the same daily usage limits as an API key.</li>
      </ul>
      <h2>On these brands</h2>
      {brands.length === 0 ? (
        <p class="muted">None yet: your organization has no brands.</p>
      ) : (
        <ul id="consent-brands">
          {brands.map((b) => (
            <li>
              {b.name ?? b.id} <span class="muted">({b.id})</span>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        It acts as <strong>{email}</strong> and follows your administrator rights: if you lose them, it loses access. You can disconnect it
        at any time under Connected assistants in the administration pages.
      </p>
      <form method="post" action="/authorize">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="intent" value="consent" />
        <input type="hidden" name="handle" value={handle} />
        <fieldset id="consent-writes">
          <legend>And, if you allow it, write</legend>
          <label class="check">
            <input type="checkbox" name="write_reports" value="on" checked />
            File data-issue reports for the data team
          </label>
          <label class="check">
            <input type="checkbox" name="write_memories" value="on" />
            Save memories: notes on what tables mean, read by every assistant and key on these brands
          </label>
          <p class="muted">
            What it writes is recorded as <strong>{`${details.clientName} for ${email}`}</strong>. To change these choices later, disconnect
            it and connect it again.
          </p>
        </fieldset>
        <div class="actions">
          <button type="submit" name="decision" value="allow">
            Allow
          </button>
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </div>
      </form>
    </section>
  </Layout>
);

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
    currentScope().log.warn('client metadata document unavailable', { reason: err.reason, detail: err.detail });
    return problemPage(c, 400, 'This app could not be verified', 'Its client metadata document could not be fetched or is invalid.');
  }
  throw err;
}

async function parseRequest(
  c: Context<AppEnv>,
  helpers: OAuthHelpers,
): Promise<{ ok: true; authRequest: AuthRequest } | { ok: false; res: Response | Promise<Response> }> {
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
          <strong>{clientName}</strong> wants to connect to the Warehouse Query API. Sign in with your administrator account to review what
          it will be able to reach.
        </p>
      }
    />
  ));
}

async function refusalPage(c: Context<AppEnv>, user: SignedIn) {
  const csrf = await sessionCsrfToken(c, user.session);
  return renderPage(c, 403, (nonce) => (
    <MessagePage
      nonce={nonce}
      title="Only administrators can connect assistants"
      header={<UserBar email={user.reach.email} csrf={csrf} next={selfPath(c)} />}
    >
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
      <ConsentPage
        nonce={nonce}
        details={details}
        handle={consent.handle}
        csrf={csrf}
        email={user.reach.email}
        brands={user.reach.brands}
        next={selfPath(c)}
      />
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
      currentScope().log.warn('client description failed after approval', { internal: String(err) });
    }
    // What it may write is the administrator's choice on this form (unticked: not allowed), kept on the grant: the
    // props decide, the metadata lets the Assistants page show it.
    const writes = { memories: form.write_memories === 'on', reports: form.write_reports === 'on' };
    metadata = { ...metadata, writes };
    const props: ConnectionProps = {
      kind: 'oauth',
      userId: user.reach.userId,
      writes,
      ...(metadata.clientName ? { clientName: metadata.clientName } : {}),
    };
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
      return problemPage(
        c,
        400,
        'This approval page expired',
        'It was already used, opened in another browser, or is more than ten minutes old.',
      );
    }
    throw err;
  }
}

/** `/authorize`: the OAuth authorization endpoint (sign-in with the admin login, then consent). */
export function authorizeRoutes(authorize: Hono<AppEnv>): void {
  authorize.get('/', (c) => showAuthorize(c));
  authorize.post('/', async (c) => {
    const form = await readForm(c);
    if (form.intent === 'signin') return postSignIn(c, form);
    if (form.intent === 'consent') return postConsent(c, form);
    return formExpired(c);
  });
}
