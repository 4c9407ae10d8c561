import type { AppRouteHandler } from '../../app-env';
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories';
import { opContext } from '../../routes/context';
import type { CreateRoute, GetRoute, ListRoute, RemoveRoute, UpdateRoute } from './memories.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listMemories(opContext(c), c.req.valid('query')), 200);

export const get: AppRouteHandler<GetRoute> = async (c) => c.json(await getMemory(opContext(c), c.req.valid('param')), 200);

export const create: AppRouteHandler<CreateRoute> = async (c) => c.json(await createMemory(opContext(c), c.req.valid('json')), 201);

export const update: AppRouteHandler<UpdateRoute> = async (c) =>
  c.json(await updateMemory(opContext(c), { ...c.req.valid('json'), ...c.req.valid('param') }), 200);

export const remove: AppRouteHandler<RemoveRoute> = async (c) => c.json(await deleteMemory(opContext(c), c.req.valid('param')), 200);
