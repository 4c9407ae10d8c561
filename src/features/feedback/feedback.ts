import { enqueueNotification } from '../notifications/notifications';
import { z } from 'zod';
import { newId } from '../../lib/ids';
import { FeedbackStatusSchema, type FeedbackRequest, type FeedbackStatusResponse } from './feedback.schemas';
import { ApiError } from '../../errors';
import type { OpContext } from '../../context';
import { resolveBrand } from '../../auth/scope';
import { ATTACHED_QUERY_JSON, AttachedQuerySchema, FEEDBACK_AUDIT } from '../feedback-inbox/inbox';
import { rowOwner } from '../../auth/ownership';
import { catalogSnapshot } from '../../catalog/snapshot';
import type { FeedbackResponse } from './feedback.schemas';

/** The attached runs as the caller is told of them: request id, time, stored query and outcome (the SQL stays stored). */
function attachedRuns(json: string | null): NonNullable<FeedbackResponse['attached']>['queries'] {
  return AttachedRowsSchema.parse(json === null ? [] : JSON.parse(json)).map((r) => ({
    requestId: r.requestId,
    at: new Date(r.createdAt).toISOString(),
    queryId: r.queryId,
    outcome: r.outcome,
  }));
}

/** What attachedRuns reads of each copied query_log row (the json_object in submitFeedback). */
const AttachedRowsSchema = z.array(AttachedQuerySchema.pick({ requestId: true, createdAt: true, queryId: true, outcome: true }));

/**
 * submitFeedback: files a data-issue report. The target brand follows the usual scoping (403 FORBIDDEN_BRAND
 * outside the key's scope; a single-brand key defaults to its brand). An org key that omits `brandId` files a
 * general, organization-wide report: stored with the org and no brand. Credentials whose brands span several
 * organizations (an OAuth administrator of two orgs) have no one org to file under, so they must name the brand:
 * 400 VALIDATION otherwise, as a report nobody could read in the console would be filed for nothing.
 *
 * The principal's last 20 query_log rows from the 24 h before filing are copied into the report in the same
 * statement that stores it, so the snapshot is exactly what the log held at that moment (newest first); runs from
 * before filing that reach the log later (it is written through a queue) are added when the report is read
 * (feedback-inbox/inbox.ts, LATE_QUERIES). A report
 * about one brand attaches only that brand's runs (an org key's runs on its other brands are not about this
 * issue, and would crowd it out of the 20); a general report attaches the principal's runs on any brand.
 */
export async function submitFeedback(ctx: OpContext, req: FeedbackRequest): Promise<FeedbackResponse> {
  // `req` has passed FeedbackRequestSchema's field rules: the REST route parses the body with it and the MCP tool
  // declares its arguments with the same fields, so the limits are not checked again here.
  if (ctx.principal.writes?.reports === false) {
    throw new ApiError(
      'FEEDBACK_WRITE_FORBIDDEN',
      'this assistant connection was approved without filing data-issue reports. An administrator can disconnect it ' +
        '(Connected assistants) and connect it again with "File data-issue reports" ticked on the approval page',
    );
  }
  const brandId = resolveBrand(ctx.principal, req.brandId, { required: false });
  const brand = brandId === null ? null : (await catalogSnapshot(ctx.env, ctx.now)).brands.get(brandId);
  if (brand === undefined) throw new ApiError('FORBIDDEN_BRAND', `this key cannot access brand ${JSON.stringify(brandId)}`);
  const owner = rowOwner(ctx.principal, brand);
  if (owner.orgId === null) {
    throw new ApiError(
      'VALIDATION',
      'brandId is required: these credentials administer brands in several organizations, so a report without a brand ' +
        'would belong to none of them (list the brands with GET /v1/data/brands or the list_brands tool)',
      { details: { parameter: 'brandId' } },
    );
  }
  const feedbackRef = newId('fb');
  const stored = await ctx.env.DB.prepare(
    `INSERT INTO feedback (id, request_id, principal_kind, principal_id, org_id, brand_id, summary, expected, observed,
                           severity, transcript, recent_queries, created_at, user_id)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
            (SELECT json_group_array(json(obj)) FROM (SELECT ${ATTACHED_QUERY_JSON} AS obj FROM query_log q
                      WHERE q.principal_kind = ?3 AND q.principal_id = ?4 AND q.created_at > ?13 AND q.created_at <= ?12
                        AND (?6 IS NULL OR q.brand_id = ?6)
                      ORDER BY q.created_at DESC, q.id DESC LIMIT ?14)),
            ?12, ?15
     RETURNING recent_queries`,
  )
    .bind(
      feedbackRef,
      ctx.requestId,
      ctx.principal.kind,
      ctx.principal.id,
      owner.orgId,
      owner.brandId,
      req.summary,
      req.expected ?? null,
      req.observed ?? null,
      req.severity ?? null,
      req.transcript === undefined ? null : JSON.stringify(req.transcript),
      ctx.now,
      ctx.now - FEEDBACK_AUDIT.windowMs,
      FEEDBACK_AUDIT.rows,
      ctx.principal.userId ?? null,
    )
    .first<{ recent_queries: string | null }>();
  ctx.log.info('feedback filed', { feedbackRef, brandId, severity: req.severity ?? null });
  enqueueNotification(ctx, { kind: 'feedback-filed', feedbackRef }, owner.orgId);
  return { feedbackRef, attached: { queries: attachedRuns(stored?.recent_queries ?? null), turns: req.transcript?.length ?? 0 } };
}

/**
 * getFeedback: the status and the data team's notes of a report, for the credentials that filed it (the same API
 * key, or the same assistant connection); anyone else gets 404 FEEDBACK_NOT_FOUND, as for a reference that does not
 * exist. Assignment rows and who on the team acted are not shown: the filer learns only whether it is assigned.
 */
export async function getFeedback(ctx: OpContext, feedbackRef: string): Promise<FeedbackStatusResponse> {
  const own = 'f.id = ?1 AND f.principal_kind = ?2 AND f.principal_id = ?3';
  const params = [feedbackRef, ctx.principal.kind, ctx.principal.id];
  const [one, updates] = await ctx.env.DB.batch([
    ctx.env.DB.prepare(
      `SELECT f.id, f.status, f.summary, f.brand_id, f.severity, f.created_at, f.assignee_user_id IS NOT NULL AS assigned
         FROM feedback f WHERE ${own}`,
    ).bind(...params),
    ctx.env.DB.prepare(
      `SELECT c.created_at, c.kind, c.from_status, c.to_status, c.note FROM feedback_status_changes c
        WHERE c.feedback_id = ?1 AND c.kind IN ('status', 'note') AND EXISTS (SELECT 1 FROM feedback f WHERE ${own})
        ORDER BY c.created_at, c.id`,
    ).bind(...params),
  ]);
  const row = one?.results[0] as Record<string, unknown> | undefined;
  if (row === undefined) {
    throw new ApiError('FEEDBACK_NOT_FOUND', `no data-issue report ${feedbackRef} was filed with these credentials`);
  }
  return FeedbackStatusSchema.parse({
    feedbackRef: row.id,
    status: row.status,
    summary: row.summary,
    brandId: row.brand_id,
    severity: row.severity,
    filedAt: new Date(Number(row.created_at)).toISOString(),
    assigned: row.assigned === 1,
    updates: (updates?.results ?? []).map((u) => {
      const r = u as Record<string, unknown>;
      return { at: new Date(Number(r.created_at)).toISOString(), kind: r.kind, from: r.from_status, to: r.to_status, note: r.note };
    }),
  });
}
