import type { Context } from 'hono';
import { html } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AppEnv } from '../app-env';
import { randomBase64Url } from '../lib/ids';
import { neutralise } from '../lib/text';

export interface RenderOptions {
  /**
   * Restrict form targets to this origin. Off for the consent page only: its form is answered with a redirect to
   * the assistant's callback, and browsers apply form-action to that redirect too.
   */
  formActionSelf?: boolean;
  /** Extra headers (e.g. the consent transaction's binding cookie). */
  headers?: Headers;
}

/** Form field values: what an administrator edits goes back exactly as stored. */
const FIELD_VALUES = /(<textarea\b[^>]*>[\s\S]*?<\/textarea>|\svalue="[^"]*")/;

/**
 * The page with every spoofing character (right-to-left overrides, zero-width characters, NUL and other controls;
 * src/lib/text.ts) shown as `[U+XXXX]`, in text and attributes alike, so names, memory titles and anything else
 * stored reads as what it is. Form field values are left as they are, so editing a memory does not rewrite it.
 */
export function neutraliseOutsideFields(page: string): string {
  return page
    .split(FIELD_VALUES)
    .map((part, i) => (i % 2 === 1 ? part : neutralise(part)))
    .join('');
}

/**
 * Renders a server-side page with the headers every admin and authorization page carries: a nonce-based CSP (the
 * inline stylesheet and copy script run, nothing else does), no framing, no caching (pages show secrets and CSRF
 * tokens), no referrer to other sites; spoofing characters shown neutralised (neutraliseOutsideFields).
 */
export async function renderPage(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  page: (nonce: string) => Child,
  opts: RenderOptions = {},
): Promise<Response> {
  const nonce = randomBase64Url(16);
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    ...(opts.formActionSelf === false ? [] : ["form-action 'self'"]),
  ].join('; ');
  if (opts.headers) {
    for (const cookie of opts.headers.getAll('set-cookie')) c.header('set-cookie', cookie, { append: true });
    for (const [name, value] of opts.headers) if (name !== 'set-cookie') c.header(name, value);
  }
  c.header('content-security-policy', csp);
  c.header('cache-control', 'no-store');
  c.header('x-frame-options', 'DENY');
  c.header('x-content-type-options', 'nosniff');
  // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on our own form posts.
  c.header('referrer-policy', 'same-origin');
  const body = await html`<!doctype html>${page(nonce)}`;
  return c.html(neutraliseOutsideFields(body.toString()), status);
}
