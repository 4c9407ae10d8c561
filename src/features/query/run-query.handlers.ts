import type { AppRouteHandler } from '../../app-env';
import { readQueryPage, runQuery } from './run-query';
import { opContext } from '../../context';
import type { PageRoute, RunRoute } from './run-query.routes';

export const run: AppRouteHandler<RunRoute> = async (c) => {
  const { result, headers } = await runQuery(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};

export const page: AppRouteHandler<PageRoute> = async (c) => {
  const { result, headers } = await readQueryPage(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};
