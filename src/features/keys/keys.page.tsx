import type { Context, Hono } from 'hono';
import type { FC } from 'hono/jsx';
import type { AppEnv } from '../../app-env';
import { loadKeyUsage, type KeyUsage } from './key-usage';
import {
  createManagedKey,
  keyScopeChoices,
  listManagedKeys,
  revokeManagedKey,
  updateManagedKeyLimits,
  type KeyScopeChoice,
  type ManagedKey,
} from './keys';
import { defaultLimits } from '../../auth/api-keys';
import { KEY_SETTING_NAMES, KEY_SETTINGS, type KeyLimits, type KeySettingName } from '../../auth/key-settings';
import { ApiError } from '../../errors';
import { putFlash } from '../../web/flash';
import { firstFormError } from '../../web/form';
import { requireAdminPost, type Admin, adminGet } from '../../web/guards';
import {
  CREATE_KEY_FIELD_LABELS,
  CreateKeyFormSchema,
  formField,
  KEY_LIMIT_FIELD_LABELS,
  KeyLimitsFormSchema,
  limitInputValues,
} from './key-forms';
import { AdminPage, ConfirmPage, Time } from '../../web/layout';
import { renderPage } from '../../web/render';
import { count, formatByteLimit, formatBytes } from './units';
import { KEY_CREATED_PATH, type KeyCreatedFlash } from './key-created.page';
import { currentScope } from '../../context';
import { ListCard, type ListColumn } from '../../web/console-parts';

/** Fixed texts for `?notice=` after a redirect; the parameter only picks one, it is never echoed. */
const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked. Requests with it are refused from now on.',
  'key-not-found': 'That key was not found or was already revoked.',
  'key-limits-saved': "The key's limits were saved. Its next request runs under them.",
};

function limitText(value: number | null, fallback: number, format: (n: number) => string): string {
  return value === null ? `${format(fallback)} (default)` : format(value);
}

/** What the change-limits form of one key shows after a refused save: the typed values and the problem. */
export interface LimitsEdit {
  keyId: string;
  /** The form field at fault (it gets focus), e.g. `dailyBytes`. */
  field: string;
  error: string;
  values: Partial<Record<string, string>>;
}

const UsageCell: FC<{ k: ManagedKey; usage: KeyUsage | undefined }> = ({ k, usage }) =>
  k.revokedAt !== null ? <span class="muted">revoked</span> : <UsageSummary usage={usage} />;

/** Runs and bytes billed in the rolling 24 h against the limits, and a block if one applies (keys, connections). */
export const UsageSummary: FC<{ usage: KeyUsage | undefined }> = ({ usage }) => {
  if (usage === undefined || usage.state === 'not-loaded') return <span class="muted">not loaded (too many on one page)</span>;
  if (usage.state === 'unavailable') return <span class="muted">usage unavailable</span>;
  const { runs, bytes, blockedUntil, blockedBy } = usage.snapshot;
  return (
    <ul class="plain">
      <li>
        {count(runs.used)} / {count(runs.limit)} queries
      </li>
      <li>
        {formatBytes(bytes.used)} / {formatByteLimit(bytes.limit)} billed
      </li>
      {blockedUntil !== null ? (
        <li class="blocked">
          {blockedBy === 'bytes' ? 'Byte' : 'Query'} limit reached; runs again at <Time ms={Date.parse(blockedUntil)} />
        </li>
      ) : null}
    </ul>
  );
};

const BYTES_HINT = 'e.g. 500 GiB, 1.5 TiB or 200 MiB; a bare number is GiB';

/** Formats a setting's value in its unit. */
function settingText(name: KeySettingName, n: number): string {
  return KEY_SETTINGS[name].unit === 'bytes' ? formatByteLimit(n) : count(n);
}

/** The limit inputs (create form and change-limits forms), one per key setting, by form field. */
const LIMIT_INPUTS = KEY_SETTING_NAMES.map((setting) => ({
  setting,
  name: formField(setting),
  hint: (d: KeyLimits) => settingText(setting, d[setting]),
  attrs: (KEY_SETTINGS[setting].unit === 'bytes'
    ? // Text, not number: the value carries its unit, and shows back exactly what is stored (units.ts).
      { type: 'text', spellcheck: 'false', autocomplete: 'off' }
    : { type: 'number', min: '1', step: '1', inputmode: 'numeric' }) as Record<string, string>,
}));

/** How each setting reads in a key's row. */
const LIMIT_SUFFIX: Record<KeySettingName, string> = {
  dailyQueries: 'queries / 24 h',
  dailyBytes: '/ 24 h',
  maxBytesBilled: 'per query',
  checksPerMinute: 'dry runs + refusals / min',
  pageReadsPerMinute: 'result pages / min',
  maxRunningJobs: 'long jobs at once',
  jobTimeoutMs: 'ms longest job',
};

/** Set or clear a live key's limits. Closed unless a save of this key was just refused. */
const LimitsForm: FC<{ k: ManagedKey; csrf: string; defaults: KeyLimits; edit: LimitsEdit | undefined }> = ({
  k,
  csrf,
  defaults,
  edit,
}) => {
  const id = (field: string) => `limits-${k.id}-${field}`;
  const values = edit?.values ?? limitInputValues(k.limits);
  const errorId = `limits-${k.id}-error`;
  const field = (name: string) => {
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
        <p class="hint">Empty = the default. Bytes: {BYTES_HINT}. Applies from the key's next request.</p>
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

const KeyRow: FC<{
  k: ManagedKey;
  csrf: string;
  defaults: KeyLimits;
  usage: KeyUsage | undefined;
  edit: LimitsEdit | undefined;
}> = ({ k, csrf, defaults, usage, edit }) => (
  <tr id={`key-${k.id}`} class={k.revokedAt !== null ? 'status-revoked' : undefined}>
    <td data-label="Name">{k.name}</td>
    <td data-label="Prefix">
      <code>{k.prefix}…</code>
    </td>
    <td data-label="Scope">
      {k.scope.kind === 'org' ? 'Organization' : 'Brand'}: {k.scope.name ?? k.scope.id}
      {k.memoriesWrite ? <div class="muted">writes memories</div> : null}
    </td>
    <td data-label="Status">
      {/* One child per cell: on a phone each cell is a two-column grid (its label, then this). */}
      {k.revokedAt !== null ? (
        <span>
          Revoked <Time ms={k.revokedAt} />
        </span>
      ) : (
        <div class="status">
          <span class="status-live">Live</span>
          <a class="button danger" href={`/admin/keys/${encodeURIComponent(k.id)}/revoke`} aria-label={`Revoke key ${k.name}`}>
            Revoke
          </a>
        </div>
      )}
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
      <div>
        <ul class="plain">
          {KEY_SETTING_NAMES.map((n) => (
            <li>
              {limitText(k.limits[n], defaults[n], (v) => settingText(n, v))} {LIMIT_SUFFIX[n]}
            </li>
          ))}
        </ul>
        {k.revokedAt === null ? <LimitsForm k={k} csrf={csrf} defaults={defaults} edit={edit?.keyId === k.id ? edit : undefined} /> : null}
      </div>
    </td>
  </tr>
);

/** Values to keep in the create form after a validation error (every field of the form, by name). */
export type CreateFormValues = Partial<Record<keyof typeof CREATE_KEY_FIELD_LABELS, string>>;

export interface KeysPageProps {
  nonce: string;
  email: string;
  csrf: string;
  notice?: string;
  error?: string;
  keys: ManagedKey[];
  scopes: KeyScopeChoice[];
  defaults: KeyLimits;
  /** Rolling-24 h usage of each live key, by key id. */
  usage: ReadonlyMap<string, KeyUsage>;
  /** A refused change-limits form, shown open on its key with the problem. */
  limitsEdit?: LimitsEdit;
  form?: CreateFormValues;
  /** The create form's field at fault. */
  invalid?: 'name';
}

/** The create form's input id of each setting (`key-max-bytes` for the per-query ceiling, as it always was). */
const createInputId = (setting: KeySettingName) => (setting === 'maxBytesBilled' ? 'key-max-bytes' : `key-${KEY_SETTINGS[setting].flag}`);

/**
 * What the "Reaches" choice starts on: the first brand, the safer default (a leaked brand key reaches one brand's
 * data, an organization key every brand's); an organization only for someone who administers no single brand.
 */
function defaultScope(scopes: readonly KeyScopeChoice[]): string | undefined {
  return (scopes.find((s) => s.kind === 'brand') ?? scopes[0])?.value;
}

/** The create-key form. A new field goes in key-forms.ts (schema, label) and here (its input). */
const CreateKeyForm: FC<{
  csrf: string;
  scopes: KeyScopeChoice[];
  defaults: KeyLimits;
  error?: string;
  /** The field the error is about (it gets focus and aria-invalid). */
  invalid?: 'name';
  form?: CreateFormValues;
}> = ({ csrf, scopes, defaults, error, invalid, form }) => (
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
          <label for="key-name">{CREATE_KEY_FIELD_LABELS.name}</label>
          <input
            id="key-name"
            name="name"
            required
            maxlength={100}
            value={form?.name ?? ''}
            placeholder="e.g. Looker Studio"
            aria-invalid={invalid === 'name' ? 'true' : undefined}
            aria-describedby={invalid === 'name' ? 'create-error' : undefined}
            autofocus={invalid === 'name'}
          />
        </div>
        <div>
          <label for="key-scope">{CREATE_KEY_FIELD_LABELS.scope}</label>
          <select id="key-scope" name="scope" required>
            {scopes.map((s) => (
              <option value={s.value} selected={s.value === (form?.scope ?? defaultScope(scopes))}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
      </div>
      <label for="key-memories">
        {CREATE_KEY_FIELD_LABELS.memories} <span class="hint">notes on what tables mean; writes stay within the key's own brands</span>
      </label>
      <select id="key-memories" name="memories">
        <option value="read" selected={form?.memories !== 'write'}>
          Read only
        </option>
        <option value="write" selected={form?.memories === 'write'}>
          Read and write
        </option>
      </select>
      <fieldset>
        <legend>Limits (leave empty for the defaults)</legend>
        <p class="muted">Bytes: {BYTES_HINT}.</p>
        <div class="grid three">
          {LIMIT_INPUTS.map(({ setting, name, hint, attrs }) => (
            <div>
              <label for={createInputId(setting)}>
                {CREATE_KEY_FIELD_LABELS[name]} <span class="hint">default {hint(defaults)}</span>
              </label>
              <input id={createInputId(setting)} name={name} value={form?.[name] ?? ''} {...attrs} />
            </div>
          ))}
        </div>
      </fieldset>
      <div class="actions">
        <button type="submit">Create key</button>
      </div>
    </form>
  </section>
);

const KEY_COLUMNS: ListColumn[] = ['Name', 'Prefix', 'Scope', 'Status', 'Created', 'Last used', 'Used, last 24 h', 'Limits'].map(
  (label) => ({
    label,
  }),
);

export const KeysPage: FC<KeysPageProps> = ({
  nonce,
  email,
  csrf,
  notice,
  error,
  invalid,
  keys,
  scopes,
  defaults,
  usage,
  limitsEdit,
  form,
}) => (
  <AdminPage title="API keys" nonce={nonce} current="keys" email={email} csrf={csrf} notice={notice}>
    <CreateKeyForm csrf={csrf} scopes={scopes} defaults={defaults} error={error} invalid={invalid} form={form} />
    <ListCard
      id="keys"
      title="Keys"
      caption="Keys of the organizations and brands you administer. Usage counts query runs and bytes billed in the last 24 hours (rolling). Changed limits and revocations take effect immediately."
      columns={KEY_COLUMNS}
      count={keys.length}
      empty="No keys yet."
      tableClass="keys"
    >
      {keys.map((k) => (
        <KeyRow k={k} csrf={csrf} defaults={defaults} usage={usage.get(k.id)} edit={limitsEdit} />
      ))}
    </ListCard>
  </AdminPage>
);

async function renderKeysPage(
  c: Context<AppEnv>,
  { user, csrf }: Admin,
  status: 200 | 400 | 403 | 409,
  extra: Pick<KeysPageProps, 'notice' | 'error' | 'form' | 'limitsEdit' | 'invalid'> = {},
) {
  const defaults = defaultLimits(c.env);
  const [keys, scopes] = await Promise.all([listManagedKeys(c.env, user.reach), keyScopeChoices(c.env, user.reach)]);
  const usage = await loadKeyUsage(c.env, keys, defaults, Date.now(), currentScope().log);
  return renderPage(c, status, (nonce) => (
    <KeysPage nonce={nonce} email={user.reach.email} csrf={csrf} keys={keys} scopes={scopes} defaults={defaults} usage={usage} {...extra} />
  ));
}

/** The keys page: `/admin` (list and create form), create, change limits, revoke (with a confirmation page). */
export function keysRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/', async (c, signedIn) => {
    const notice = NOTICES[c.req.query('notice') ?? ''];
    return renderKeysPage(c, signedIn, 200, notice ? { notice } : {});
  });

  // POST/redirect/GET: the secret goes into a one-time flash and the browser to the page that shows it, so a
  // reload of that page shows nothing new instead of creating another key.
  admin.post('/keys', async (c) => {
    const now = Date.now();
    const g = await requireAdminPost(c, now);
    if (!g.ok) return g.res;
    const { user, form } = g.value;
    const parsed = CreateKeyFormSchema.safeParse(form);
    const keep: CreateFormValues = Object.fromEntries(Object.keys(CREATE_KEY_FIELD_LABELS).map((name) => [name, form[name]]));
    if (!parsed.success) {
      return renderKeysPage(c, g.value, 400, { error: firstFormError(parsed.error, CREATE_KEY_FIELD_LABELS).message, form: keep });
    }
    let created;
    try {
      created = await createManagedKey(c.env, user.reach, parsed.data, now);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'FORBIDDEN_BRAND') {
        return renderKeysPage(c, g.value, 403, { error: 'You do not administer the organization or brand you chose.', form: keep });
      }
      if (err instanceof ApiError && err.code === 'VALIDATION') {
        return renderKeysPage(c, g.value, 409, { error: `Not created: ${err.message}.`, form: keep, invalid: 'name' });
      }
      throw err;
    }
    const scope = created.key.scope;
    const flash: KeyCreatedFlash = {
      keyId: created.key.id,
      keyName: created.key.name,
      scopeLabel: `${scope.kind === 'org' ? 'every brand of' : 'brand'} ${scope.name ?? scope.id}`,
      secret: created.secret,
    };
    await putFlash(c, user.session, 'key-created', flash);
    return c.redirect(KEY_CREATED_PATH, 303);
  });

  adminGet(admin, '/keys/:id/revoke', async (c, signedIn) => {
    const { user, csrf } = signedIn;
    const key = (await listManagedKeys(c.env, user.reach)).find((k) => k.id === c.req.param('id') && k.revokedAt === null);
    if (!key) return c.redirect('/admin?notice=key-not-found', 303);
    return renderPage(c, 200, (nonce) => (
      <ConfirmPage
        nonce={nonce}
        title={`Revoke key ${key.name}?`}
        email={user.reach.email}
        csrf={csrf}
        action={`/admin/keys/${encodeURIComponent(key.id)}/revoke`}
        confirmLabel="Revoke key"
        cancelHref={`/admin#key-${encodeURIComponent(key.id)}`}
      >
        <p>
          <strong>{key.name}</strong> (<code>{key.prefix}…</code>, {key.scope.kind === 'org' ? 'organization' : 'brand'}{' '}
          {key.scope.name ?? key.scope.id}) stops working at once: every request with it is refused, on REST and MCP.
        </p>
        <p>This cannot be undone. A revoked key stays listed for the record.</p>
      </ConfirmPage>
    ));
  });

  admin.post('/keys/:id/revoke', async (c) => {
    const now = Date.now();
    const g = await requireAdminPost(c, now);
    if (!g.ok) return g.res;
    const id = c.req.param('id');
    // Only the confirmation page's form revokes; anything else is sent there.
    if (g.value.form.confirm !== 'yes') return c.redirect(`/admin/keys/${encodeURIComponent(id)}/revoke`, 303);
    const revoked = await revokeManagedKey(c.env, g.value.user.reach, id, now);
    return c.redirect(`/admin?notice=${revoked ? 'key-revoked' : 'key-not-found'}`, 303);
  });

  admin.post('/keys/:id/limits', async (c) => {
    const g = await requireAdminPost(c, Date.now());
    if (!g.ok) return g.res;
    const { user, form } = g.value;
    const keyId = c.req.param('id');
    const parsed = KeyLimitsFormSchema.safeParse(form);
    if (!parsed.success) {
      const { field, message } = firstFormError(parsed.error, KEY_LIMIT_FIELD_LABELS);
      const values = Object.fromEntries(LIMIT_INPUTS.map(({ name }) => [name, form[name]]));
      return renderKeysPage(c, g.value, 400, { limitsEdit: { keyId, field, error: `Not saved. ${message}`, values } });
    }
    const saved = await updateManagedKeyLimits(c.env, user.reach, keyId, parsed.data);
    // Back to the key's row: on a long list the saved limits are in view.
    return c.redirect(saved ? `/admin?notice=key-limits-saved#key-${encodeURIComponent(keyId)}` : '/admin?notice=key-not-found', 303);
  });
}
