import { canonicalPath } from '../http/canonical-path';

/**
 * Where a sign-in (or a sign-out) sends the person afterwards: the page they were on or followed (an assistant's
 * citation `/admin/search/<id>`, a notification's `/admin/inbox/<id>`), carried as `next`. `next` comes from the
 * address bar, so it is data an attacker may write: only a path of this deployment is ever returned, in its
 * canonical form (src/http/canonical-path.ts, the form routing and every check use), and only to the pages listed
 * here; anything else is null and the caller goes to its default page. Pure: no I/O.
 */

export const LOGIN_PATH = '/admin/login';
const LOGOUT_PATH = '/admin/logout';
const CONSOLE_PATH = '/admin';
const AUTHORIZE_PATH = '/authorize';
/** Longer return paths are refused (a search item's path is well under it; a query string could be anything). */
const MAX_RETURN_PATH = 2048;
/** Resolves a path alone; a path that would leave it (`//host`, `/\host`) is refused before and after. */
const BASE = 'https://return-path.invalid';

/**
 * `raw` as a path of this origin, canonical, with its query; null for anything else. Refused: not starting with one
 * `/` (`//host` and `/\host` are other hosts to a browser), a backslash, whitespace or control character anywhere
 * (browsers drop or translate them before parsing), a fragment, an encoded `/`, `\` or NUL, more than
 * MAX_RETURN_PATH characters.
 */
function sameOriginPath(raw: string | null | undefined): { pathname: string; search: string } | null {
  if (!raw || raw.length > MAX_RETURN_PATH) return null;
  if (!raw.startsWith('/') || raw.startsWith('//') || /[\\#\u0000-\u0020\u007f]/.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE) return null;
  const canonical = canonicalPath(url.pathname);
  if (!canonical.ok || canonical.pathname.startsWith('//')) return null;
  return { pathname: canonical.pathname, search: url.search };
}

function isConsolePage(pathname: string): boolean {
  return (pathname === CONSOLE_PATH || pathname.startsWith(`${CONSOLE_PATH}/`)) && pathname !== LOGIN_PATH && pathname !== LOGOUT_PATH;
}

/** Where a console sign-in returns to: a console page (never the sign-in or sign-out itself); null otherwise. */
export function signInReturnPath(raw: string | null | undefined): string | null {
  const p = sameOriginPath(raw);
  return p && isConsolePage(p.pathname) ? `${p.pathname}${p.search}` : null;
}

/**
 * Where a sign-in returns to after a form was sent without a session (it expired while the form was open): the
 * console page the form was on, from the request's Referer (the console's pages send it to their own origin only:
 * `Referrer-Policy: same-origin`), when that is this origin; null otherwise. What was typed into the form is not
 * kept: it is sent again from the page, now signed in.
 */
export function formReturnPath(referer: string | null | undefined, requestUrl: string): string | null {
  if (!referer) return null;
  let from: URL;
  try {
    from = new URL(referer);
  } catch {
    return null;
  }
  if (from.origin !== new URL(requestUrl).origin) return null;
  return signInReturnPath(`${from.pathname}${from.search}`);
}

/**
 * Where a sign-out goes: back to an authorization request (signing out on the consent screen to switch accounts),
 * or to sign in again on the way to a console page; else the sign-in page.
 */
export function signOutDestination(raw: string | null | undefined): string {
  const p = sameOriginPath(raw);
  if (p && p.pathname === AUTHORIZE_PATH && p.search !== '') return `${p.pathname}${p.search}`;
  return loginPath(signInReturnPath(raw));
}

/** The sign-in page, returning to `next` (already checked by signInReturnPath) when it is not the console's home. */
export function loginPath(next: string | null): string {
  return next === null || next === CONSOLE_PATH ? LOGIN_PATH : `${LOGIN_PATH}?${new URLSearchParams({ next }).toString()}`;
}

/** The path (and query) a console request was made on: the canonical URL the front door routed. */
export function requestPath(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}
