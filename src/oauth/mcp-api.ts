import { insufficientScope } from '@cloudflare/workers-oauth-provider';
import { z } from 'zod';
import { oauthPrincipal } from '../auth/oauth-principal';
import { PrincipalSchema, type Principal } from '../auth/principal';
import type { Env } from '../env';
import { ApiError, describeError } from '../errors';
import { currentScope } from '../context';
import type { Tool } from '../mcp/define-tool';
import { handleMcpRequest, mcpErrorResponse } from '../mcp/handler';
import { forgetGrantUse, recordGrantUse } from './grant-activity';
import { encodeGrantUserId, grantIdOfToken } from './grant-user';
import { canonicalOrigin, OAUTH_SCOPE, oauthHelpers, resourceMetadataUrl, type OAuthHandlers } from './provider';

/**
 * What reaches the MCP handler in `ctx.props`: an API key's principal (from `resolveExternalToken`, fresh this
 * request), or the user an OAuth grant acts for (stored at approval; brands are recomputed on every request).
 */
export const ConnectionPropsSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('key'), principal: PrincipalSchema }),
  z.object({
    kind: z.literal('oauth'),
    userId: z.string().min(1),
    /**
     * What the administrator allowed at approval. Absent on grants approved before the choice existed: those were
     * promised "read only" plus data-issue reports, so that is what they get (LEGACY_WRITES).
     */
    writes: z.object({ memories: z.boolean(), reports: z.boolean() }).optional(),
    /** The client's name as the consent page showed it. */
    clientName: z.string().max(200).optional(),
  }),
]);
export type ConnectionProps = z.infer<typeof ConnectionPropsSchema>;

/** The writes of a grant approved before the consent page offered the choice: what that page promised. */
const LEGACY_WRITES = { memories: false, reports: true } as const;

/** The verified token the library puts on `ctx.auth` next to `ctx.props`. */
const AuthContextSchema = z.object({
  auth: z.object({
    token: z.string(),
    audience: z.string(),
    scope: z.array(z.string()),
    expiresAt: z.number().optional(),
    userId: z.string().optional(),
    clientId: z.string().optional(),
  }),
});

/**
 * `apiHandler` of the provider: every request to /v1/data/mcp that carried a valid OAuth access token or API key.
 * OAuth connections are re-checked against D1 here on every request; a user who administers nothing any more gets
 * 401 and the grant is revoked, so the assistant has to be approved again. `tools` is every tool the endpoint
 * serves (the composition root's list); each principal is offered those it may use.
 */
export const mcpApiHandler = (tools: readonly Tool[]): OAuthHandlers['apiHandler'] => ({
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const { requestId, log } = currentScope();

    const props = ConnectionPropsSchema.safeParse(ctx.props);
    if (!props.success) {
      return mcpErrorResponse(
        new ApiError('INTERNAL', 'internal error; quote the requestId to support', { internal: props.error }),
        requestId,
        log,
      );
    }
    if (props.data.kind === 'key') return handleMcpRequest(request, props.data.principal, tools);

    const parsedAuth = AuthContextSchema.safeParse(ctx);
    const grantId = parsedAuth.success ? grantIdOfToken(parsedAuth.data.auth.token) : null;
    if (!parsedAuth.success || grantId === null) {
      return mcpErrorResponse(
        new ApiError('INTERNAL', 'internal error; quote the requestId to support', { internal: 'no verified token on ctx.auth' }),
        requestId,
        log,
      );
    }
    const auth = parsedAuth.data.auth;
    // Every grant we issue carries the scope; anything else was not approved through our consent page.
    if (!auth.scope.includes(OAUTH_SCOPE)) return insufficientScope(auth, [OAUTH_SCOPE]);

    const userId = props.data.userId;
    let principal: Principal;
    try {
      principal = await oauthPrincipal(env, {
        grantId,
        userId,
        writes: props.data.writes ?? LEGACY_WRITES,
        ...(props.data.clientName === undefined ? {} : { clientName: props.data.clientName }),
      });
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'UNAUTHORIZED') return mcpErrorResponse(err, requestId, log);
      log.warn('oauth connection of a former administrator refused; revoking its grant', { grantId });
      ctx.waitUntil(
        Promise.all([oauthHelpers(env, request.url).revokeGrant(grantId, encodeGrantUserId(userId)), forgetGrantUse(env, grantId)]).catch(
          (e: unknown) => log.error('grant revocation failed', { grantId, internal: describeError(e) }),
        ),
      );
      const res = mcpErrorResponse(err, requestId, log);
      res.headers.set(
        'www-authenticate',
        'Bearer realm="OAuth", error="invalid_token", error_description="the approving user is no longer an administrator", ' +
          `resource_metadata="${resourceMetadataUrl(canonicalOrigin(new URL(request.url)))}"`,
      );
      return res;
    }
    const write = recordGrantUse(env, grantId, Date.now());
    if (write) ctx.waitUntil(write.catch((e: unknown) => log.warn('recording connection use failed', { internal: describeError(e) })));
    return handleMcpRequest(request, principal, tools);
  },
});
