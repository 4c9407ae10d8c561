import type { AppRouteHandler } from '../../app-env';
import { ifMatchVersions, versionETag } from '../../http/etag';
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories';
import { opContext } from '../../context';
import type { CreateRoute, GetRoute, ListRoute, RemoveRoute, UpdateRoute } from './memories.routes';

export const list: AppRouteHandler<ListRoute> = async (c) => c.json(await listMemories(opContext('rest'), c.req.valid('query')), 200);

export const get: AppRouteHandler<GetRoute> = async (c) => {
  const memory = await getMemory(opContext('rest'), c.req.valid('param'));
  return c.json(memory, 200, { ETag: versionETag(memory.version) });
};

export const create: AppRouteHandler<CreateRoute> = async (c) => {
  const memory = await createMemory(opContext('rest'), c.req.valid('json'));
  return c.json(memory, 201, { ETag: versionETag(memory.version) });
};

export const update: AppRouteHandler<UpdateRoute> = async (c) => {
  const expectedVersions = ifMatchVersions(c.req.valid('header')['if-match']);
  const memory = await updateMemory(opContext('rest'), { ...c.req.valid('json'), ...c.req.valid('param'), expectedVersions });
  return c.json(memory, 200, { ETag: versionETag(memory.version) });
};

export const remove: AppRouteHandler<RemoveRoute> = async (c) => {
  const expectedVersions = ifMatchVersions(c.req.valid('header')['if-match']);
  const deleted = await deleteMemory(opContext('rest'), { ...c.req.valid('param'), expectedVersions });
  return c.json(deleted, 200, { ETag: versionETag(deleted.version) });
};
