import type { AppRouteHandler } from '../../app-env';
import { readQueryPage, runQuery } from './run-query';
import { opContext } from '../../routes/context';
import type { PageRoute, RunRoute } from './run-query.routes';

export const run: AppRouteHandler<RunRoute> = async (c) => {
  const { result, headers } = await runQuery(opContext(c), c.req.valid('json'));
  return c.json(result, 200, headers);
};

export const page: AppRouteHandler<PageRoute> = async (c) => {
  const { result, headers } = await readQueryPage(opContext(c), c.req.valid('json'));
  return c.json(result, 200, headers);
};
