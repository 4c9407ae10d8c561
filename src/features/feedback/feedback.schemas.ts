import { z } from '@hono/zod-openapi';
import { BrandIdField } from '../../schemas/fields';

/** Size limits of a feedback report. Larger input is refused with 400 VALIDATION, never cut silently. */
const FEEDBACK_LIMITS = {
  summaryChars: 2_000,
  expectedChars: 2_000,
  observedChars: 2_000,
  transcriptTurns: 100,
  /** Sum of the UTF-8 bytes of every turn's content. */
  transcriptBytes: 200 * 1024,
} as const;

const TurnSchema = z
  .strictObject({
    role: z.enum(['user', 'assistant', 'tool']),
    content: z.string().openapi({ description: 'Verbatim text of the turn.' }),
  })
  .openapi({ description: 'One conversation turn, verbatim.' });

const utf8 = new TextEncoder();

export const FeedbackRequestSchema = z
  .strictObject({
    summary: z
      .string()
      .min(1, 'summary must not be empty')
      .max(FEEDBACK_LIMITS.summaryChars, `summary must be at most ${FEEDBACK_LIMITS.summaryChars} characters`)
      .openapi({ description: 'What looks wrong.', example: 'Revenue for May looks doubled' }),
    brandId: BrandIdField.optional().openapi({
      description:
        'Brand the issue is about. Single-brand keys may omit it. Organization keys omit it only for a general, ' +
        'organization-wide report (stored without a brand).',
      example: 'brand_acme',
    }),
    expected: z
      .string()
      .max(FEEDBACK_LIMITS.expectedChars, `expected must be at most ${FEEDBACK_LIMITS.expectedChars} characters`)
      .optional()
      .openapi({ description: 'The value expected.' }),
    observed: z
      .string()
      .max(FEEDBACK_LIMITS.observedChars, `observed must be at most ${FEEDBACK_LIMITS.observedChars} characters`)
      .optional()
      .openapi({ description: 'The value that looked off.' }),
    severity: z.enum(['low', 'medium', 'high']).optional(),
    transcript: z
      .array(TurnSchema)
      .max(FEEDBACK_LIMITS.transcriptTurns, `transcript must have at most ${FEEDBACK_LIMITS.transcriptTurns} turns`)
      .refine(
        (turns) => turns.reduce((n, t) => n + utf8.encode(t.content).length, 0) <= FEEDBACK_LIMITS.transcriptBytes,
        `transcript content must total at most ${FEEDBACK_LIMITS.transcriptBytes} bytes (UTF-8)`,
      )
      .optional()
      .openapi({ description: 'Relevant conversation turns, verbatim and in order.' }),
  })
  .openapi('FeedbackRequest');
export type FeedbackRequest = z.infer<typeof FeedbackRequestSchema>;

export const FeedbackResponseSchema = z
  .object({
    feedbackRef: z.string().openapi({ description: 'Reference id to quote in support.', example: 'fb_3f9a0c1d2e4b5a6c7d8e' }),
    attached: z
      .object({
        queries: z
          .array(
            z.object({
              requestId: z.string().openapi({ description: 'The request id of the run, as its response gave it.' }),
              at: z.string().openapi({ description: 'When it ran, ISO 8601 UTC.' }),
              queryId: z.string().nullable().openapi({ description: 'The stored query run by id; null for raw SQL.' }),
              outcome: z.string().openapi({ description: 'How the run ended (ok, or the error code).' }),
            }),
          )
          .openapi({ description: 'The runs attached to the report, newest first (those the query log held when it was filed).' }),
        turns: z.number().int().openapi({ description: 'Transcript turns stored with the report.' }),
      })
      .optional()
      .openapi({ description: 'Extension: what was attached to the report, so the caller can say what the data team will see.' }),
  })
  .openapi('FeedbackResponse');
export type FeedbackResponse = z.infer<typeof FeedbackResponseSchema>;

export const FeedbackRefField = z
  .string()
  .min(1)
  .max(100)
  .regex(/^fb_[A-Za-z0-9]+$/, 'feedbackRef must be a reference returned when the report was filed (fb_...)')
  .openapi({ description: 'The `feedbackRef` returned when the report was filed.', example: 'fb_3f9a0c1d2e4b5a6c7d8e' });

const FeedbackUpdateSchema = z
  .object({
    at: z.string().openapi({ description: 'When (ISO 8601).' }),
    kind: z.enum(['status', 'note']).openapi({ description: '`status`: the status changed; `note`: a note without a change.' }),
    from: z.enum(['open', 'acknowledged', 'resolved', 'dismissed']),
    to: z.enum(['open', 'acknowledged', 'resolved', 'dismissed']),
    note: z.string().nullable().openapi({ description: "The data team's note, when they wrote one." }),
  })
  .openapi('FeedbackUpdate');

export const FeedbackStatusSchema = z
  .object({
    feedbackRef: z.string(),
    status: z.enum(['open', 'acknowledged', 'resolved', 'dismissed']).openapi({
      description: 'open -> acknowledged -> resolved or dismissed; a resolved or dismissed report can be reopened.',
    }),
    summary: z.string(),
    brandId: z.string().nullable().openapi({ description: 'null for an organization-wide report.' }),
    severity: z.enum(['low', 'medium', 'high']).nullable(),
    filedAt: z.string().openapi({ description: 'When it was filed (ISO 8601).' }),
    assigned: z.boolean().openapi({ description: 'Whether someone on the data team has taken it.' }),
    updates: z.array(FeedbackUpdateSchema).openapi({ description: "The data team's status changes and notes, oldest first." }),
  })
  .openapi('FeedbackStatus');
export type FeedbackStatusResponse = z.infer<typeof FeedbackStatusSchema>;
