import type { AppRouteHandler } from '../../app-env';
import { runQuery } from '../../operations/run-query';
import { opContext } from '../context';
import type { RunRoute } from './run-query.routes';

export const run: AppRouteHandler<RunRoute> = async (c) => {
  const { result, headers } = await runQuery(opContext(c), c.req.valid('json'));
  return c.json(result, 200, headers);
};
