import type { Hono } from 'hono';
import type { AppEnv } from '../../app-env';
import { MessagePage } from '../layout';
import { renderPage } from '../render';

/** Registered after every page: any other path under /admin is an HTML page saying so, not the API's JSON 404. */
export function notFoundRoutes(admin: Hono<AppEnv>): void {
  admin.all('*', (c) =>
    renderPage(c, 404, (nonce) => (
      <MessagePage nonce={nonce} title="Page not found">
        <p>There is no administration page at this address.</p>
        <p>
          <a href="/admin">Go to the administration pages</a>
        </p>
      </MessagePage>
    )),
  );
}
