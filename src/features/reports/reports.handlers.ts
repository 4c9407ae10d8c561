import type { AppRouteHandler } from '../../app-env';
import { getReport, listReportQueries, listReports } from './reports';
import { opContext } from '../../context';
import type { GetRoute, ListQueriesRoute, ListRoute } from './reports.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listReports(opContext('rest'), c.req.valid('query')), 200);

export const get: AppRouteHandler<GetRoute> = async (c) =>
  c.json(await getReport(opContext('rest'), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);

export const listQueries: AppRouteHandler<ListQueriesRoute> = async (c) =>
  c.json(await listReportQueries(opContext('rest'), { ...c.req.valid('param'), ...c.req.valid('query') }), 200);
