import type { AppRouteHandler } from '../../app-env';
import { getReport, listReportQueries, listReports } from './reports';
import { opContext } from '../../routes/context';
import type { GetRoute, ListQueriesRoute, ListRoute } from './reports.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listReports(opContext(c), c.req.valid('query')), 200);

export const get: AppRouteHandler<GetRoute> = async (c) =>
  c.json(await getReport(opContext(c), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);

export const listQueries: AppRouteHandler<ListQueriesRoute> = async (c) =>
  c.json(await listReportQueries(opContext(c), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);
