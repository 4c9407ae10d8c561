import type { AppRouteHandler } from '../../app-env';
import { readQueryPage, runQuery } from './run-query';
import { opContext } from '../../context';
import type { PageRoute, RunRoute } from './run-query.routes';
import { prefersAsync, startAsync } from '../query-jobs/query-jobs.handlers';

export const run: AppRouteHandler<RunRoute> = async (c) => {
  if (prefersAsync(c.req.header('prefer'))) {
    const started = await startAsync(opContext('rest'), c.req.valid('json'));
    if ('accepted' in started) return c.json(started.accepted, 202, started.headers);
    return c.json(started.done.result, 200, started.done.headers);
  }
  const { result, headers } = await runQuery(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};

export const page: AppRouteHandler<PageRoute> = async (c) => {
  const { result, headers } = await readQueryPage(opContext('rest'), c.req.valid('json'));
  return c.json(result, 200, headers);
};
