import { enqueueNotification } from '../notifications/notifications';
import { z } from 'zod';
import { newId } from '../../lib/ids';
import type { FeedbackRequest } from './feedback.schemas';
import type { OpContext } from '../../context';
import { resolveBrand } from '../../auth/scope';
import { rowOwner } from '../../auth/ownership';
import { catalogSnapshot } from '../../catalog/snapshot';
import { ApiError } from '../../errors';
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

/** What attachedRuns reads of each copied query_log row (the json_object in submitFeedback; NOT NULL columns but query_id). */
const AttachedRowsSchema = z.array(
  z.object({ requestId: z.string(), createdAt: z.number(), queryId: z.string().nullable(), outcome: z.string() }),
);

/** How much of the principal's query log is attached to a report. */
const FEEDBACK_AUDIT = { rows: 20, windowMs: 24 * 60 * 60 * 1000 } as const;

/**
 * submitFeedback: files a data-issue report. The target brand follows the usual scoping (403 FORBIDDEN_BRAND
 * outside the key's scope; a single-brand key defaults to its brand). An org key that omits `brandId` files a
 * general, organization-wide report: stored with the org and no brand. Credentials whose brands span several
 * organizations (an OAuth administrator of two orgs) have no one org to file under, so they must name the brand:
 * 400 VALIDATION otherwise, as a report nobody could read in the console would be filed for nothing.
 *
 * The principal's last 20 query_log rows from the 24 h before filing are copied into the report in the same
 * statement that stores it, so the snapshot is exactly what the log held at that moment (newest first). A report
 * about one brand attaches only that brand's runs (an org key's runs on its other brands are not about this
 * issue, and would crowd it out of the 20); a general report attaches the principal's runs on any brand.
 */
export async function submitFeedback(ctx: OpContext, req: FeedbackRequest): Promise<FeedbackResponse> {
  // `req` has passed FeedbackRequestSchema's field rules: the REST route parses the body with it and the MCP tool
  // declares its arguments with the same fields, so the limits are not checked again here.
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
            (SELECT json_group_array(json_object(
                      'id', id, 'requestId', request_id, 'brandId', brand_id, 'queryId', query_id, 'period', json(period),
                      'sql', sql, 'dryRun', CASE WHEN dry_run THEN json('true') ELSE json('false') END,
                      'transport', transport, 'outcome', outcome, 'bytesProcessed', bytes_processed,
                      'bytesBilled', bytes_billed, 'rowCount', row_count, 'durationMs', duration_ms, 'createdAt', created_at))
               FROM (SELECT * FROM query_log
                      WHERE principal_kind = ?3 AND principal_id = ?4 AND created_at > ?13 AND created_at <= ?12
                        AND (?6 IS NULL OR brand_id = ?6)
                      ORDER BY created_at DESC, id DESC LIMIT ?14)),
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
  enqueueNotification(ctx, { kind: 'feedback-filed', feedbackRef }, ctx.principal.orgId);
  return { feedbackRef, attached: { queries: attachedRuns(stored?.recent_queries ?? null), turns: req.transcript?.length ?? 0 } };
}
