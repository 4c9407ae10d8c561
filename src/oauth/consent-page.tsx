import type { ConsentDescription } from '@cloudflare/workers-oauth-provider';
import type { FC } from 'hono/jsx';
import type { ReachableBrand } from '../auth/oauth-principal';
import { Layout } from '../admin/views/layout';
import { UserBar } from '../admin/views/pages';

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
 * can reach and that it is read-only. Every client-supplied string is escaped by JSX.
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
          <strong>Read only</strong>: list reports and saved queries, and run read-only <code>SELECT</code> queries. It cannot
          change any data.
        </li>
        <li>File data-issue reports for the data team.</li>
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
        It acts as <strong>{email}</strong> and follows your administrator rights: if you lose them, it loses access. You
        can disconnect it at any time under Connected assistants in the administration pages.
      </p>
      <form method="post" action="/authorize">
        <input type="hidden" name="csrf" value={csrf} />
        <input type="hidden" name="intent" value="consent" />
        <input type="hidden" name="handle" value={handle} />
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
