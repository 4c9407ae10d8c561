import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../app-env';
import { describeError } from '../errors';
import { MessagePage } from './views/pages';
import { renderPage } from './views/render';

/** Forms on these pages are small; anything bigger is refused before it is read. */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * What every HTML sub-app (/admin, /authorize) shares: a small body limit, a same-origin check on POST (defence in
 * depth next to the CSRF tokens: browsers send Origin on every cross-site POST), and an HTML error page that shows
 * the request id, the cause going to the log only.
 */
export function useHtmlDefaults(app: Hono<AppEnv>): void {
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: (c) =>
        renderPage(c, 413, (nonce) => (
          <MessagePage nonce={nonce} title="Form too large">
            <p>That form was larger than this page accepts.</p>
          </MessagePage>
        )),
    }),
  );
  app.use('*', async (c, next) => {
    const origin = c.req.header('origin');
    if (c.req.method === 'POST' && origin !== undefined && origin !== new URL(c.req.url).origin) {
      return formExpired(c, 'This form was sent from another site and was refused.');
    }
    return next();
  });
  app.onError((err, c) => {
    c.get('log').error('page failed', { path: c.req.path, internal: describeError(err) });
    return renderPage(c, 500, (nonce) => (
      <MessagePage nonce={nonce} title="Something went wrong">
        <p>
          The page could not be shown. If this keeps happening, quote request id <code>{c.get('requestId')}</code> to
          support.
        </p>
      </MessagePage>
    ));
  });
}

/** 403 for a form whose CSRF token (or origin) did not check out. */
export function formExpired(c: Context<AppEnv>, message = 'This form expired or was not sent from this site.') {
  return renderPage(c, 403, (nonce) => (
    <MessagePage nonce={nonce} title="Form refused">
      <p>{message}</p>
      <p>Go back, reload the page and try again.</p>
    </MessagePage>
  ));
}
