import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, JSON_BODY_ERRORS, jsonBody, okJson } from '../../schemas/common';
import { FeedbackRefField, FeedbackRequestSchema, FeedbackResponseSchema, FeedbackStatusSchema } from './feedback.schemas';
import type { AppOpenAPI, AppRouteHandler } from '../../app-env';
import { getFeedback, submitFeedback } from './feedback';
import { opContext } from '../../context';

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
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN_BRAND', 'FEEDBACK_WRITE_FORBIDDEN', ...JSON_BODY_ERRORS),
  },
});

export const get = createRoute({
  method: 'get',
  path: '/v1/data/feedback/{feedbackRef}',
  operationId: 'getFeedback',
  tags: ['Feedback'],
  summary: "Read a filed report's status and the data team's notes",
  description:
    'The status of a data-issue report and the notes the data team wrote on it, oldest first, for the credentials that ' +
    'filed it (the same key or assistant connection). Any other caller gets 404 FEEDBACK_NOT_FOUND.',
  security: [{ bearerAuth: [] }],
  request: { params: z.object({ feedbackRef: FeedbackRefField.openapi({ param: { name: 'feedbackRef', in: 'path' } }) }) },
  responses: {
    ...okJson(FeedbackStatusSchema, "The report's status and notes"),
    ...errorResponses('VALIDATION', 'UNAUTHORIZED', 'FEEDBACK_NOT_FOUND'),
  },
});

const submitHandler: AppRouteHandler<typeof submit> = async (c) =>
  c.json(await submitFeedback(opContext('rest'), c.req.valid('json')), 200);

const getHandler: AppRouteHandler<typeof get> = async (c) =>
  c.json(await getFeedback(opContext('rest'), c.req.valid('param').feedbackRef), 200);

export function registerFeedbackRoutes(app: AppOpenAPI) {
  return app.openapi(submit, submitHandler).openapi(get, getHandler);
}
