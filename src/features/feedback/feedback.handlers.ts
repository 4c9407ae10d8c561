import type { AppRouteHandler } from '../../app-env';
import { getFeedback, submitFeedback } from './feedback';
import { opContext } from '../../context';
import type { GetRoute, SubmitRoute } from './feedback.routes';

export const submit: AppRouteHandler<SubmitRoute> = async (c) => c.json(await submitFeedback(opContext('rest'), c.req.valid('json')), 200);

export const get: AppRouteHandler<GetRoute> = async (c) =>
  c.json(await getFeedback(opContext('rest'), c.req.valid('param').feedbackRef), 200);
