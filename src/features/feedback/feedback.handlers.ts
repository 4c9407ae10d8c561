import type { AppRouteHandler } from '../../app-env';
import { submitFeedback } from './feedback';
import { opContext } from '../../context';
import type { SubmitRoute } from './feedback.routes';

export const submit: AppRouteHandler<SubmitRoute> = async (c) => c.json(await submitFeedback(opContext('rest'), c.req.valid('json')), 200);
