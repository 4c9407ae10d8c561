import { createRoute } from '@hono/zod-openapi';
import { errorResponses, JSON_BODY_ERRORS, jsonBody, okJson } from '../../schemas/common';
import { FeedbackRequestSchema, FeedbackResponseSchema } from './feedback.schemas';

export const submit = createRoute({
  method: 'post',
  path: '/v1/data/feedback',
  operationId: 'submitFeedback',
  tags: ['Feedback'],
  summary: 'File a data-issue report',
  description:
    'Files a data-issue report for the data team. The last 20 queries this key ran in the past 24 hours are attached ' +
    'automatically as an audit trail. Limits: summary, expected and observed at most 2,000 characters each; transcript at ' +
    'most 100 turns and 200 KiB of content. Larger input is refused (400 VALIDATION), never cut.',
  security: [{ bearerAuth: [] }],
  request: { body: jsonBody(FeedbackRequestSchema) },
  responses: {
    ...okJson(FeedbackResponseSchema, 'The report was filed'),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND', ...JSON_BODY_ERRORS),
  },
});

export type SubmitRoute = typeof submit;
