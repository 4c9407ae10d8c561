import type { Child, FC } from 'hono/jsx';
import type { ConnectedAssistant } from '../assistants';
import type { KeyScopeChoice, ManagedKey } from '../keys';
import { GIB } from '../keys';
import { Layout } from './layout';

/** "2026-05-01 12:34 UTC" in a <time> element. */
export const Time: FC<{ ms: number | null; none?: string }> = ({ ms, none }) =>
  ms === null ? <span class="muted">{none ?? 'never'}</span> : <time datetime={new Date(ms).toISOString()}>{new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC</time>;

export function formatBytes(n: number): string {
  const gib = n / GIB;
  if (gib >= 1024) return `${+(gib / 1024).toFixed(2)} TiB`;
  if (gib >= 0.01) return `${+gib.toFixed(2)} GiB`;
  return `${n.toLocaleString('en-US')} bytes`;
}

export interface Defaults {
  dailyQueries: number;
  dailyBytes: number;
  maxBytesBilled: number;
}

/** Signed-in user and the sign-out form, for the top bar. */
export const UserBar: FC<{ email: string; csrf: string; next?: string }> = ({ email, csrf, next }) => (
  <form method="post" action="/admin/logout" class="userbar">
    <span class="muted">Signed in as {email}</span>{' '}
    <input type="hidden" name="csrf" value={csrf} />
    {next ? <input type="hidden" name="next" value={next} /> : null}
    <button type="submit" class="secondary">
      Sign out
    </button>
  </form>
);

export interface SignInPageProps {
  nonce: string;
  action: string;
  csrf: string;
  error?: string;
  email?: string;
  /** Shown above the form when signing in to approve an assistant. */
  intro?: Child;
}

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
        <input id="email" name="email" type="email" autocomplete="username" required value={email ?? ''} aria-describedby={error ? 'signin-error' : undefined} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <div class="actions">
          <button type="submit">Sign in</button>
        </div>
      </form>
    </section>
  </Layout>
);

/** A page that only says something: refusals, expired forms, errors. */
export const MessagePage: FC<{ nonce: string; title: string; header?: Child; children?: Child }> = ({ nonce, title, header, children }) => (
  <Layout title={title} nonce={nonce} header={header} narrow>
    <section class="card">
      <h1>{title}</h1>
      {children}
    </section>
  </Layout>
);

export const NotAdminMessage: FC<{ email: string }> = ({ email }) => (
  <>
    <p>
      You are signed in as <strong>{email}</strong>, who does not administer any organization or brand.
    </p>
    <p>
      Only administrators can manage API keys and connect AI assistants. Ask an administrator of your organization for
      access, or sign out and sign in with an administrator account.
    </p>
  </>
);

function limitText(value: number | null, fallback: number, format: (n: number) => string): string {
  return value === null ? `${format(fallback)} (default)` : format(value);
}

const KeyRow: FC<{ k: ManagedKey; csrf: string; defaults: Defaults }> = ({ k, csrf, defaults }) => (
  <tr class={k.revokedAt !== null ? 'status-revoked' : undefined}>
    <td data-label="Name">{k.name}</td>
    <td data-label="Prefix">
      <code>{k.prefix}…</code>
    </td>
    <td data-label="Scope">
      {k.scope.kind === 'org' ? 'Organization' : 'Brand'}: {k.scope.name ?? k.scope.id}
    </td>
    <td data-label="Created">
      <Time ms={k.createdAt} />
    </td>
    <td data-label="Last used">
      <Time ms={k.lastUsedAt} />
    </td>
    <td data-label="Limits">
      <ul class="plain">
        <li>{limitText(k.limits.dailyQueries, defaults.dailyQueries, (n) => n.toLocaleString('en-US'))} queries / 24 h</li>
        <li>{limitText(k.limits.dailyBytes, defaults.dailyBytes, formatBytes)} / 24 h</li>
        <li>{limitText(k.limits.maxBytesBilled, defaults.maxBytesBilled, formatBytes)} per query</li>
      </ul>
    </td>
    <td data-label="Status">
      {k.revokedAt !== null ? (
        <span>
          Revoked <Time ms={k.revokedAt} />
        </span>
      ) : (
        <form method="post" action={`/admin/keys/${encodeURIComponent(k.id)}/revoke`}>
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit" class="danger" aria-label={`Revoke key ${k.name}`}>
            Revoke
          </button>
        </form>
      )}
    </td>
  </tr>
);

const AssistantRow: FC<{ a: ConnectedAssistant; csrf: string }> = ({ a, csrf }) => (
  <tr>
    <td data-label="Assistant">
      {a.clientName}
      {a.redirectHost ? <div class="muted">{a.redirectHost}</div> : null}
    </td>
    <td data-label="User">{a.userEmail}</td>
    <td data-label="Connected">
      <Time ms={a.connectedAt} />
    </td>
    <td data-label="Last used">
      <Time ms={a.lastUsedAt} none="not yet" />
    </td>
    <td data-label="Action">
      <form method="post" action="/admin/assistants/revoke">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="userId" value={a.userId} />
        <input type="hidden" name="grantId" value={a.grantId} />
        <button type="submit" class="danger" aria-label={`Revoke ${a.clientName} connected by ${a.userEmail}`}>
          Revoke
        </button>
      </form>
    </td>
  </tr>
);

export interface DashboardProps {
  nonce: string;
  email: string;
  csrf: string;
  notice?: string;
  error?: string;
  keys: ManagedKey[];
  scopes: KeyScopeChoice[];
  assistants: ConnectedAssistant[];
  defaults: Defaults;
  /** Values to keep in the create form after a validation error. */
  form?: { name?: string; scope?: string; dailyQueries?: string; dailyGiB?: string; maxGiB?: string };
}

export const DashboardPage: FC<DashboardProps> = ({ nonce, email, csrf, notice, error, keys, scopes, assistants, defaults, form }) => (
  <Layout title="API keys" nonce={nonce} header={<UserBar email={email} csrf={csrf} />}>
    <h1>API keys and connected assistants</h1>
    {notice ? (
      <p class="notice" role="status">
        {notice}
      </p>
    ) : null}
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create an API key</h2>
      <p class="muted">The secret is shown once, right after creation. Only its hash is stored.</p>
      {error ? (
        <p class="alert" role="alert" id="create-error">
          {error}
        </p>
      ) : null}
      <form method="post" action="/admin/keys">
        <input type="hidden" name="csrf" value={csrf} />
        <div class="grid two">
          <div>
            <label for="key-name">Name</label>
            <input id="key-name" name="name" required maxlength={100} value={form?.name ?? ''} placeholder="e.g. Looker Studio" />
          </div>
          <div>
            <label for="key-scope">Reaches</label>
            <select id="key-scope" name="scope" required>
              {scopes.map((s) => (
                <option value={s.value} selected={form?.scope === s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        <fieldset>
          <legend>Limits (leave empty for the defaults)</legend>
          <div class="grid three">
            <div>
              <label for="key-daily-queries">
                Queries per 24 h <span class="hint">default {defaults.dailyQueries.toLocaleString('en-US')}</span>
              </label>
              <input id="key-daily-queries" name="dailyQueries" type="number" min="1" step="1" inputmode="numeric" value={form?.dailyQueries ?? ''} />
            </div>
            <div>
              <label for="key-daily-gib">
                GiB billed per 24 h <span class="hint">default {formatBytes(defaults.dailyBytes)}</span>
              </label>
              <input id="key-daily-gib" name="dailyGiB" type="number" min="0.001" step="any" inputmode="decimal" value={form?.dailyGiB ?? ''} />
            </div>
            <div>
              <label for="key-max-gib">
                Max GiB billed per query <span class="hint">default {formatBytes(defaults.maxBytesBilled)}</span>
              </label>
              <input id="key-max-gib" name="maxGiB" type="number" min="0.001" step="any" inputmode="decimal" value={form?.maxGiB ?? ''} />
            </div>
          </div>
        </fieldset>
        <div class="actions">
          <button type="submit">Create key</button>
        </div>
      </form>
    </section>

    <section class="card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      {keys.length === 0 ? (
        <p class="muted">No keys yet.</p>
      ) : (
        <table>
          <caption>Keys of the organizations and brands you administer. Revoking takes effect immediately.</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Limits</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <KeyRow k={k} csrf={csrf} defaults={defaults} />
            ))}
          </tbody>
        </table>
      )}
    </section>

    <section class="card" aria-labelledby="assistants-heading">
      <h2 id="assistants-heading">Connected assistants</h2>
      <p class="muted">
        AI assistants (Claude, ChatGPT and other MCP clients) connected over OAuth act as the administrator who approved
        them, read-only, on the brands that person administers. Revoking cuts access at once; the assistant must be
        approved again to reconnect.
      </p>
      {assistants.length === 0 ? (
        <p class="muted">No assistants are connected.</p>
      ) : (
        <table>
          <caption>Connections approved by you or by administrators of brands you manage.</caption>
          <thead>
            <tr>
              <th scope="col">Assistant</th>
              <th scope="col">User</th>
              <th scope="col">Connected</th>
              <th scope="col">Last used</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {assistants.map((a) => (
              <AssistantRow a={a} csrf={csrf} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  </Layout>
);

// The copy button's only script. Runs under the page's CSP nonce; without JavaScript the field is still selectable.
const COPY_SCRIPT = `
document.getElementById('copy-key').addEventListener('click', async function () {
  var field = document.getElementById('new-key');
  var status = document.getElementById('copy-status');
  try { await navigator.clipboard.writeText(field.value); status.textContent = 'Copied to the clipboard.'; }
  catch (e) { field.select(); status.textContent = 'Press Ctrl+C (or Cmd+C) to copy the selected key.'; }
});`;

export const KeyCreatedPage: FC<{ nonce: string; email: string; csrf: string; keyName: string; scopeLabel: string; secret: string }> = ({
  nonce,
  email,
  csrf,
  keyName,
  scopeLabel,
  secret,
}) => (
  <Layout title="Key created" nonce={nonce} header={<UserBar email={email} csrf={csrf} />} narrow>
    <section class="card">
      <h1>Key created</h1>
      <p>
        <strong>{keyName}</strong> reaches {scopeLabel}.
      </p>
      <div class="warning" role="note">
        Copy the key now. It is shown only this once; if you lose it, revoke it and create another.
      </div>
      <label for="new-key">Your new API key</label>
      <input id="new-key" readonly value={secret} autocomplete="off" spellcheck={false} />
      <div class="actions">
        <button type="button" id="copy-key">
          Copy key
        </button>
        <a class="button secondary" href="/admin">
          Back to API keys
        </a>
      </div>
      <p id="copy-status" role="status" aria-live="polite"></p>
      <p class="muted">
        Send it as <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
    </section>
    <script nonce={nonce} dangerouslySetInnerHTML={{ __html: COPY_SCRIPT }} />
  </Layout>
);
