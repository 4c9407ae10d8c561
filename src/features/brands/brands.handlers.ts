import type { AppRouteHandler } from '../../app-env';
import { listBrands } from './brands';
import { opContext } from '../../context';
import type { ListRoute } from './brands.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listBrands(opContext('rest')), 200);
