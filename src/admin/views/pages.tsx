import type { Child, FC } from 'hono/jsx';
import type { ConnectedAssistant } from '../assistants';
import type { KeyUsage } from '../key-usage';
import type { KeyScopeChoice, LimitField, ManagedKey } from '../keys';
import { GIB, KEY_LIMIT_FIELD_LABELS } from '../keys';
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

const count = (n: number) => n.toLocaleString('en-US');

/** What the change-limits form of one key shows after a refused save: the typed values and the problem. */
export interface LimitsEdit {
  keyId: string;
  /** The form field at fault (it gets focus), e.g. `dailyGiB`. */
  field: string;
  error: string;
  values: { dailyQueries?: string; dailyGiB?: string; maxGiB?: string };
}

/** A stored byte limit as the GiB the form takes; String() of bytes / 2^30 is exact and reads back to the same bytes. */
const gibValue = (bytes: number | null) => (bytes === null ? '' : String(bytes / GIB));

const UsageCell: FC<{ k: ManagedKey; usage: KeyUsage | undefined }> = ({ k, usage }) => {
  if (k.revokedAt !== null) return <span class="muted">revoked</span>;
  if (usage === undefined || usage.state === 'not-loaded') return <span class="muted">not loaded (too many keys on one page)</span>;
  if (usage.state === 'unavailable') return <span class="muted">usage unavailable</span>;
  const { runs, bytes, blockedUntil, blockedBy } = usage.snapshot;
  return (
    <ul class="plain">
      <li>
        {count(runs.used)} / {count(runs.limit)} queries
      </li>
      <li>
        {formatBytes(bytes.used)} / {formatBytes(bytes.limit)} billed
      </li>
      {blockedUntil !== null ? (
        <li class="blocked">
          {blockedBy === 'bytes' ? 'Byte' : 'Query'} limit reached; runs again at <Time ms={Date.parse(blockedUntil)} />
        </li>
      ) : null}
    </ul>
  );
};

/** The change-limits inputs: what the default reads as, and the input's type attributes. */
const LIMIT_INPUTS: { name: LimitField; hint: (d: Defaults) => string; attrs: Record<string, string> }[] = [
  { name: 'dailyQueries', hint: (d) => count(d.dailyQueries), attrs: { type: 'number', min: '1', step: '1', inputmode: 'numeric' } },
  // min 0, not 0.001: a stored limit under 1 MiB reads back as a tiny GiB figure the browser must accept unchanged.
  { name: 'dailyGiB', hint: (d) => formatBytes(d.dailyBytes), attrs: { type: 'number', min: '0', step: 'any', inputmode: 'decimal' } },
  { name: 'maxGiB', hint: (d) => formatBytes(d.maxBytesBilled), attrs: { type: 'number', min: '0', step: 'any', inputmode: 'decimal' } },
];

/** Set or clear a live key's limits. Closed unless a save of this key was just refused. */
const LimitsForm: FC<{ k: ManagedKey; csrf: string; defaults: Defaults; edit: LimitsEdit | undefined }> = ({ k, csrf, defaults, edit }) => {
  const id = (field: string) => `limits-${k.id}-${field}`;
  const values = edit?.values ?? {
    dailyQueries: k.limits.dailyQueries === null ? '' : String(k.limits.dailyQueries),
    dailyGiB: gibValue(k.limits.dailyBytes),
    maxGiB: gibValue(k.limits.maxBytesBilled),
  };
  const errorId = `limits-${k.id}-error`;
  const field = (name: LimitField) => {
    const invalid = edit?.field === name;
    return {
      id: id(name),
      name,
      value: values[name] ?? '',
      'aria-invalid': invalid ? 'true' : undefined,
      'aria-describedby': invalid ? errorId : undefined,
      autofocus: invalid,
    };
  };
  return (
    <details open={edit !== undefined}>
      <summary>
        Change limits<span class="visually-hidden"> of key {k.name}</span>
      </summary>
      <form method="post" action={`/admin/keys/${encodeURIComponent(k.id)}/limits`} class="limits">
        <input type="hidden" name="csrf" value={csrf} />
        {edit ? (
          <p class="alert" role="alert" id={errorId}>
            {edit.error}
          </p>
        ) : null}
        <p class="hint">Empty = the default. Applies from the key's next request.</p>
        {LIMIT_INPUTS.map(({ name, hint, attrs }) => (
          <>
            <label for={id(name)}>
              {KEY_LIMIT_FIELD_LABELS[name]}
              <span class="visually-hidden"> for key {k.name}</span> <span class="hint">default {hint(defaults)}</span>
            </label>
            <input {...field(name)} {...attrs} />
          </>
        ))}
        <div class="actions">
          <button type="submit" aria-label={`Save limits of key ${k.name}`}>
            Save limits
          </button>
        </div>
      </form>
    </details>
  );
};

const KeyRow: FC<{ k: ManagedKey; csrf: string; defaults: Defaults; usage: KeyUsage | undefined; edit: LimitsEdit | undefined }> = ({
  k,
  csrf,
  defaults,
  usage,
  edit,
}) => (
  <tr id={`key-${k.id}`} class={k.revokedAt !== null ? 'status-revoked' : undefined}>
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
    <td data-label="Used, last 24 h">
      <UsageCell k={k} usage={usage} />
    </td>
    <td data-label="Limits">
      <ul class="plain">
        <li>{limitText(k.limits.dailyQueries, defaults.dailyQueries, count)} queries / 24 h</li>
        <li>{limitText(k.limits.dailyBytes, defaults.dailyBytes, formatBytes)} / 24 h</li>
        <li>{limitText(k.limits.maxBytesBilled, defaults.maxBytesBilled, formatBytes)} per query</li>
      </ul>
      {k.revokedAt === null ? <LimitsForm k={k} csrf={csrf} defaults={defaults} edit={edit?.keyId === k.id ? edit : undefined} /> : null}
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
  /** Rolling-24 h usage of each live key, by key id. */
  usage: ReadonlyMap<string, KeyUsage>;
  /** A refused change-limits form, shown open on its key with the problem. */
  limitsEdit?: LimitsEdit;
  /** Values to keep in the create form after a validation error. */
  form?: { name?: string; scope?: string; dailyQueries?: string; dailyGiB?: string; maxGiB?: string };
}

export const DashboardPage: FC<DashboardProps> = ({ nonce, email, csrf, notice, error, keys, scopes, assistants, defaults, usage, limitsEdit, form }) => (
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
          <caption>
            Keys of the organizations and brands you administer. Usage counts query runs and bytes billed in the last
            24 hours (rolling). Changed limits and revocations take effect immediately.
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Used, last 24 h</th>
              <th scope="col">Limits</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <KeyRow k={k} csrf={csrf} defaults={defaults} usage={usage.get(k.id)} edit={limitsEdit} />
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
