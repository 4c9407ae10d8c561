import type { AppRouteHandler } from '../../app-env';
import { listSavedQueries } from './saved-queries';
import { opContext } from '../../context';
import type { ListRoute } from './saved-queries.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listSavedQueries(opContext('rest'), c.req.valid('query')), 200);
