import type { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { z } from 'zod';
import type { AppEnv } from '../../app-env';
import { copyScript } from '../../web/copy-button';
import { takeFlash } from '../../web/flash';
import { adminGet } from '../../web/guards';
import { Layout, MessagePage, UserBar } from '../../web/layout';
import { renderPage } from '../../web/render';

/** Where the create form's POST redirects (303) to show the new key once. */
export const KEY_CREATED_PATH = '/admin/keys/created';

/** What the create POST leaves for this page in a one-time flash. */
export const KeyCreatedFlashSchema = z.object({ keyId: z.string(), keyName: z.string(), scopeLabel: z.string(), secret: z.string() });
export type KeyCreatedFlash = z.infer<typeof KeyCreatedFlashSchema>;

const COPY_SCRIPT = copyScript({ button: 'copy-key', field: 'new-key', status: 'copy-status' }, 'key');

export const KeyCreatedPage: FC<{ nonce: string; email: string; csrf: string; created: KeyCreatedFlash }> = ({
  nonce,
  email,
  csrf,
  created,
}) => (
  <Layout title="Key created" nonce={nonce} current="keys" header={<UserBar email={email} csrf={csrf} />} narrow>
    <section class="card">
      <h1>Key created</h1>
      <p>
        <strong>{created.keyName}</strong> reaches {created.scopeLabel}.
      </p>
      <div class="warning" role="note">
        Copy the key now. It is shown only this once; if you lose it, revoke it and create another.
      </div>
      <label for="new-key">Your new API key</label>
      <input id="new-key" readonly value={created.secret} autocomplete="off" spellcheck={false} />
      <div class="actions">
        <button type="button" id="copy-key">
          Copy key
        </button>
        <a class="button secondary" href={`/admin#key-${encodeURIComponent(created.keyId)}`}>
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

/** `GET /admin/keys/created`: the new key's secret, once; a reload (or any later visit) says it is gone. */
export function keyCreatedRoutes(admin: Hono<AppEnv>): void {
  adminGet(admin, '/keys/created', async (c, signedIn) => {
    const { user, csrf } = signedIn;
    const created = await takeFlash(c, user.session, 'key-created', KeyCreatedFlashSchema);
    if (created)
      return renderPage(c, 200, (nonce) => <KeyCreatedPage nonce={nonce} email={user.reach.email} csrf={csrf} created={created} />);
    return renderPage(c, 410, (nonce) => (
      <MessagePage nonce={nonce} title="Nothing to show" header={<UserBar email={user.reach.email} csrf={csrf} />}>
        <p>A new key's secret is shown only once, and this one was already shown (or is more than two minutes old).</p>
        <p>
          If you did not copy it, revoke that key and create another. <a href="/admin">Back to API keys</a>
        </p>
      </MessagePage>
    ));
  });
}
