import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { listManagedAssistants, revokeManagedAssistant, type ConnectedAssistant } from './assistants';
import { canonicalOrigin, mcpResource, oauthHelpers } from '../../oauth/provider';
import { defaultLimits } from '../../auth/api-keys';
import { copyScript } from '../../web/copy-button';
import { loadUsage, type KeyUsage } from '../keys/key-usage';
import { UsageSummary } from '../keys/keys.page';
import { requireAdminPost, adminGet } from '../../web/guards';
import { AdminPage, ConfirmPage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { currentScope } from '../../context';

const PATH = '/admin/assistants';
const COPY_MCP_URL = copyScript({ button: 'copy-mcp-url', field: 'mcp-url', status: 'copy-status' }, 'address');

/** Fixed texts for `?notice=` after a redirect; the parameter only picks one, it is never echoed. */
const NOTICES: Record<string, string> = {
  'assistant-revoked': 'The assistant was disconnected. It must be approved again to reconnect.',
  'assistant-not-found': 'That connection was not found or was already revoked.',
};

function revokeHref(a: { userId: string; grantId: string }): string {
  return `${PATH}/revoke?${new URLSearchParams({ userId: a.userId, grantId: a.grantId })}`;
}

/** What a connection may write, as its administrator chose at approval (reading is always allowed). */
const MayWrite: FC<{ writes: ConnectedAssistant['writes'] }> = ({ writes }) => {
  // Connections approved before the choice existed write what that page promised: data-issue reports.
  const w = writes ?? { memories: false, reports: true };
  const parts = [w.reports ? 'data-issue reports' : null, w.memories ? 'memories' : null].filter((x) => x !== null);
  return parts.length === 0 ? <span class="muted">nothing (read only)</span> : <>{parts.join(', ')}</>;
};

const AssistantRow: FC<{ a: ConnectedAssistant; usage: KeyUsage | undefined }> = ({ a, usage }) => (
  <tr>
    <td data-label="Assistant">
      {a.clientName}
      {a.redirectHost ? <div class="muted">{a.redirectHost}</div> : null}
    </td>
    <td data-label="User">{a.userEmail}</td>
    <td data-label="May write">
      <MayWrite writes={a.writes} />
    </td>
    <td data-label="Connected">
      <Time ms={a.connectedAt} />
    </td>
    <td data-label="Last used">
      <Time ms={a.lastUsedAt} none="not yet" />
    </td>
    <td data-label="Used, last 24 h">
      <UsageSummary usage={usage} />
    </td>
    <td data-label="Action">
      <a class="button danger" href={revokeHref(a)} aria-label={`Revoke ${a.clientName} connected by ${a.userEmail}`}>
        Revoke
      </a>
    </td>
  </tr>
);

export interface AssistantsPageProps {
  nonce: string;
  email: string;
  csrf: string;
  notice?: string;
  assistants: ConnectedAssistant[];
  /** Each connection's rolling-24 h usage against the default limits, by grant id. */
  usage: ReadonlyMap<string, KeyUsage>;
  /** Absolute URL of the MCP endpoint, what an assistant is given to connect. */
  mcpUrl: string;
}

export const AssistantsPage: FC<AssistantsPageProps> = ({ nonce, email, csrf, notice, assistants, usage, mcpUrl }) => (
  <AdminPage title="Connected assistants" nonce={nonce} current="assistants" email={email} csrf={csrf} notice={notice}>
    <section class="card" aria-labelledby="connect-heading">
      <h2 id="connect-heading">Connect an assistant</h2>
      <p>
        In Claude, ChatGPT or another MCP client, add a custom connector (remote MCP server) with this address, then approve it when the
        client sends you here:
      </p>
      <code class="address" id="mcp-url">
        {mcpUrl}
      </code>
      <div class="actions">
        <button type="button" id="copy-mcp-url" class="secondary">
          Copy address
        </button>
      </div>
      <p id="copy-status" role="status" aria-live="polite"></p>
      <p class="muted">
        Connected assistants act for the administrator who approved them, on the brands that person administers. They read the warehouse and
        cannot change its data; they write only what that administrator allowed when approving them (data-issue reports, memories), recorded
        as "assistant for user". Revoking cuts access at once; the assistant must be approved again to reconnect.
      </p>
    </section>
    <section class="card" aria-labelledby="assistants-heading">
      <h2 id="assistants-heading">Connections</h2>
      {assistants.length === 0 ? (
        <p class="muted">No assistants are connected yet. Give one the address above to connect it.</p>
      ) : (
        <table>
          <caption>Connections approved by you or by administrators of brands you manage.</caption>
          <thead>
            <tr>
              <th scope="col">Assistant</th>
              <th scope="col">User</th>
              <th scope="col">May write</th>
              <th scope="col">Connected</th>
              <th scope="col">Last used</th>
              <th scope="col">Used, last 24 h</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {assistants.map((a) => (
              <AssistantRow a={a} usage={usage.get(a.grantId)} />
            ))}
          </tbody>
        </table>
      )}
    </section>
    <script nonce={nonce} dangerouslySetInnerHTML={{ __html: COPY_MCP_URL }} />
  </AdminPage>
);

/** The connected-assistants page: `/admin/assistants` (list), revoke (with a confirmation page). */
export function assistantsRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/assistants', async (c, signedIn) => {
    const { user, csrf } = signedIn;
    const assistants = await listManagedAssistants(c.env, oauthHelpers(c.env, c.req.url), user.reach);
    const limits = defaultLimits(c.env);
    const usage = await loadUsage(
      c.env,
      assistants.map((a) => ({ kind: 'oauth' as const, id: a.grantId, limits })),
      Date.now(),
      currentScope().log,
    );
    const notice = NOTICES[c.req.query('notice') ?? ''];
    const mcpUrl = mcpResource(canonicalOrigin(new URL(c.req.url)));
    return renderPage(c, 200, (nonce) => (
      <AssistantsPage
        nonce={nonce}
        email={user.reach.email}
        csrf={csrf}
        notice={notice}
        assistants={assistants}
        usage={usage}
        mcpUrl={mcpUrl}
      />
    ));
  });

  adminGet(admin, '/assistants/revoke', async (c, signedIn) => {
    const { user, csrf } = signedIn;
    const target = { userId: c.req.query('userId') ?? '', grantId: c.req.query('grantId') ?? '' };
    const assistants = await listManagedAssistants(c.env, oauthHelpers(c.env, c.req.url), user.reach);
    const a = assistants.find((x) => x.userId === target.userId && x.grantId === target.grantId);
    if (!a) return c.redirect(`${PATH}?notice=assistant-not-found`, 303);
    return renderPage(c, 200, (nonce) => (
      <ConfirmPage
        nonce={nonce}
        title={`Disconnect ${a.clientName}?`}
        email={user.reach.email}
        csrf={csrf}
        action={`${PATH}/revoke`}
        fields={target}
        confirmLabel="Revoke connection"
        cancelHref={PATH}
      >
        <p>
          <strong>{a.clientName}</strong>
          {a.redirectHost ? ` (${a.redirectHost})` : ''}, connected by {a.userEmail}, loses access at once: its tokens are deleted and its
          next request is refused.
        </p>
        <p>To use it again, someone has to connect and approve it again.</p>
      </ConfirmPage>
    ));
  });

  admin.post('/assistants/revoke', async (c) => {
    const g = await requireAdminPost(c, Date.now());
    if (!g.ok) return g.res;
    const { userId, grantId, confirm } = g.value.form;
    const complete = userId !== undefined && grantId !== undefined && userId !== '' && grantId !== '';
    // Only the confirmation page's form revokes; anything else is sent there.
    if (complete && confirm !== 'yes') return c.redirect(revokeHref({ userId, grantId }), 303);
    const revoked = complete
      ? await revokeManagedAssistant(c.env, oauthHelpers(c.env, c.req.url), g.value.user.reach, { userId, grantId })
      : false;
    return c.redirect(`${PATH}?notice=${revoked ? 'assistant-revoked' : 'assistant-not-found'}`, 303);
  });
}
