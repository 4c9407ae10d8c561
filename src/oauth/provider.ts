import {
  getOAuthApi,
  GrantType,
  OAuthError,
  OAuthProvider,
  type OAuthHelpers,
  type OAuthProviderOptions,
} from '@cloudflare/workers-oauth-provider';
import { authenticateApiKey } from '../auth/api-keys';
import { isAdministrator, loadAdminReach } from '../auth/oauth-principal';
import type { Env } from '../env';
import { ApiError } from '../errors';
import { createLogger } from '../lib/log';
import { TtlCache } from '../lib/ttl-cache';
import { MCP_PATH } from '../constants';
import { decodeGrantUserId } from './grant-user';
import { requestScope } from '../context';

/** Where the administrator signs in and approves a connection (our page, in the Hono app). */
export const AUTHORIZE_PATH = '/authorize';
/** Token endpoint (code, refresh) and RFC 7009 revocation, served by the library. */
export const TOKEN_PATH = '/oauth/token';
/** RFC 7591 dynamic client registration, served by the library. */
export const REGISTER_PATH = '/oauth/register';
/** The one scope a connection gets: read-only use of every tool. */
export const OAUTH_SCOPE = 'data:read';

/** Access tokens live one hour (the library default); refresh tokens 30 days, renewed while in use. */
const ACCESS_TOKEN_TTL_SECONDS = 3600;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
const REFRESH_TOKEN_IDLE_TTL_SECONDS = 30 * 24 * 3600;

/** Handlers the provider routes to: the MCP endpoint for valid tokens, the Hono app for everything else. */
export interface OAuthHandlers {
  apiHandler: { fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> };
  defaultHandler: { fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> };
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The origin the OAuth metadata, token audiences and the MCP resource identifier are built on. Workers are served
 * over https, and OAuth 2.1 and the library refuse plain http except on loopback (so `wrangler dev` works); a plain
 * http request on another host (a test harness, a misconfigured proxy) is treated as its https origin.
 */
export function canonicalOrigin(url: URL): string {
  if (url.protocol === 'https:' || isLoopbackHost(url.hostname)) return url.origin;
  return `https://${url.host}`;
}

/** The MCP endpoint's canonical resource identifier (RFC 8707 / RFC 9728) for an origin. */
export function mcpResource(origin: string): string {
  return `${origin}${MCP_PATH}`;
}

/** RFC 9728 metadata location for the MCP endpoint (the path is inserted after the well-known prefix). */
export function resourceMetadataUrl(origin: string): string {
  return `${origin}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

/** Options shared by the provider and by the helpers the admin pages use; everything but the handlers. */
function baseOptions(origin: string): Omit<OAuthProviderOptions<Env>, 'apiHandler' | 'defaultHandler'> {
  const resource = mcpResource(origin);
  return {
    apiRoute: MCP_PATH,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    // Claude, ChatGPT and other assistants present a CIMD client id or register dynamically.
    clientIdMetadataDocumentEnabled: true,
    scopesSupported: [OAUTH_SCOPE],
    requiredScopes: [OAUTH_SCOPE],
    accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTTL: REFRESH_TOKEN_TTL_SECONDS,
    refreshTokenIdleTTL: REFRESH_TOKEN_IDLE_TTL_SECONDS,
    resourceMetadata: {
      resource,
      resource_name: 'Warehouse Query API (MCP, read-only)',
      bearer_methods_supported: ['header'],
    },
    // A code exchange or a refresh is refused (and the grant revoked, as `invalid_grant` does) once the approving
    // user administers nothing: losing admin rights also stops an assistant from minting new access tokens.
    tokenExchangeCallback: async ({ grantType, userId, env }) => {
      if (grantType !== GrantType.AUTHORIZATION_CODE && grantType !== GrantType.REFRESH_TOKEN) return undefined;
      const reach = await loadAdminReach(env, decodeGrantUserId(userId));
      if (!isAdministrator(reach)) {
        throw new OAuthError('invalid_grant', { description: 'the approving user is no longer an administrator' });
      }
      return undefined;
    },
    // The same MCP endpoint takes API keys: a bearer credential that is not one of our OAuth tokens is tried as a
    // key. `null` answers the usual 401 invalid_token challenge; storage failures stay 500s.
    resolveExternalToken: async ({ token, env }) => {
      try {
        const principal = await authenticateApiKey(env, token, Date.now(), requestScope()?.waitUntil);
        return { props: { kind: 'key', principal }, audience: resource };
      } catch (err) {
        if (err instanceof ApiError && err.code === 'UNAUTHORIZED') return null;
        throw err;
      }
    },
    // The library keeps the exact reason off the wire; it goes to our log.
    onError: ({ code, status, description, internal }) => {
      createLogger('oauth').warn('oauth error response', {
        code,
        status,
        description,
        category: internal.category,
        reason: internal.reason,
      });
    },
  };
}

/** Providers per canonical origin, bounded so a flood of Host names cannot grow the isolate's memory. */
const providers = new TtlCache<OAuthProvider<Env>>(16);
/** A provider's size for the byte bound: its state is private (not measurable); the entry bound is what holds. */
const PROVIDER_BYTES = 16 * 1024;

/** The provider for one origin (its resource identifier and issuer are that origin's). */
export function providerFor(origin: string, handlers: OAuthHandlers): OAuthProvider<Env> {
  let provider = providers.get(origin, 0);
  if (!provider) {
    provider = new OAuthProvider<Env>({ ...baseOptions(origin), ...handlers });
    providers.set(origin, provider, 0, PROVIDER_BYTES);
  }
  return provider;
}

const NO_HANDLER = { fetch: async () => new Response(null, { status: 404 }) };

/**
 * The library's helpers (parse/complete authorization, consent, list and revoke grants) for the origin of a
 * request, configured exactly as the provider that serves it.
 */
export function oauthHelpers(env: Env, requestUrl: string | URL): OAuthHelpers {
  const origin = canonicalOrigin(new URL(requestUrl));
  return getOAuthApi<Env>({ ...baseOptions(origin), apiHandler: NO_HANDLER, defaultHandler: NO_HANDLER }, env);
}
