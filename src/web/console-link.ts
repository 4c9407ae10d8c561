import type { Env } from '../env';

/**
 * Links to console pages that leave the Worker (an assistant's search and fetch `url`, a notification's report
 * link): built from the configured CONSOLE_ORIGIN only, never from the request (its Host and the canonical origin
 * derived from it are the caller's to choose, and a link an assistant cites outlives the request that made it).
 */

/** The console's origin, from configuration only; null when unset or not an http(s) origin. */
export function consoleOrigin(env: Env): string | null {
  const raw = (env.CONSOLE_ORIGIN ?? '').trim();
  if (raw === '') return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * The link to a console page (`path` starts with `/`): on CONSOLE_ORIGIN, or the path alone when it is not
 * configured (a relative link says where the page is on the deployment without naming a host nobody configured).
 */
export function consoleLink(env: Env, path: string): string {
  const origin = consoleOrigin(env);
  return origin === null ? path : `${origin}${path}`;
}
