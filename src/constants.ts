/**
 * Constants that modules on both sides of the request path need (the Hono app, the MCP handler, the OAuth
 * provider). A leaf module: it imports nothing, so depending on it can never close an import cycle.
 */

/** Prefix of every data route (REST and MCP). */
export const API_PREFIX = '/v1/data';

/** Path of the MCP endpoint (docs/api.md, MCP). */
export const MCP_PATH = `${API_PREFIX}/mcp`;

/** The OpenAPI 3.1 document of the REST API (served without an API key). */
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

/** Largest request body accepted on any route (the SQL and feedback limits are smaller and checked by zod). */
export const MAX_BODY_BYTES = 1024 * 1024;
