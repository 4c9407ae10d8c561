import { env, SELF } from 'cloudflare:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect, vi } from 'vitest';
import { z } from 'zod';
import { hashPassword } from '../src/auth/passwords';

/** The origin every OAuth test talks to (https: the resource identifier and cookies are https ones). */
export const ORIGIN = 'https://api.test';
export const MCP_URL = `${ORIGIN}/v1/data/mcp`;
export const CALLBACK = 'https://assistant.example/oauth/callback';

/**
 * A minimal browser over the Worker's own fetch: keeps cookies (honouring Max-Age=0 deletion), never follows
 * redirects (tests assert on them), and sends the Origin header a browser sends on form posts.
 */
/** Distinct default addresses (198.18.0.0/15, the benchmarking range), so browsers that name none share no per-source limit. */
let browsers = 0;
function nextBrowserIp(): string {
  browsers++;
  return `198.18.${Math.floor(browsers / 250) % 250}.${(browsers % 250) + 1}`;
}

export class TestBrowser {
  readonly cookies = new Map<string, string>();
  constructor(readonly ip = nextBrowserIp()) {}

  async fetch(pathOrUrl: string, init: RequestInit = {}): Promise<Response> {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${ORIGIN}${pathOrUrl}`;
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    headers.set('cf-connecting-ip', this.ip);
    const res = await SELF.fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getAll('set-cookie')) {
      const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired =
        attrs.some((a) => /^max-age=0$/i.test(a)) || attrs.some((a) => /^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now());
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  get(path: string): Promise<Response> {
    return this.fetch(path);
  }

  /** Posts a urlencoded form the way a browser does from a page of this origin. */
  post(path: string, fields: Record<string, string>, origin: string | null = ORIGIN): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (origin !== null) headers.origin = origin;
    return this.fetch(path, { method: 'POST', headers, body: new URLSearchParams(fields).toString() });
  }
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Value of the first input named `name` in a page (hidden CSRF tokens, consent handles). */
export function inputValue(html: string, name: string): string {
  for (const tag of html.match(/<input\b[^>]*>/g) ?? []) {
    if (new RegExp(`\\bname="${name}"`).test(tag)) {
      const m = /\bvalue="([^"]*)"/.exec(tag);
      if (m) return unescapeHtml(m[1] ?? '');
    }
  }
  throw new Error(`no input named ${name} in page:\n${html.slice(0, 2000)}`);
}

/** The path + query of a redirect's Location (relative or absolute). */
export function location(res: Response): URL {
  const loc = res.headers.get('location');
  if (!loc) throw new Error(`expected a redirect, got ${res.status}`);
  return new URL(loc, ORIGIN);
}

function base64Url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const raw = new Uint8Array(32);
  crypto.getRandomValues(raw);
  const verifier = base64Url(raw);
  const challenge = base64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

const RegistrationSchema = z.object({ client_id: z.string(), client_name: z.string().optional() });

/** Dynamic client registration (RFC 7591) of a public client, as Claude or ChatGPT do. */
export async function registerClient(name = 'Test Assistant', redirectUri = CALLBACK): Promise<string> {
  const res = await SELF.fetch(`${ORIGIN}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  expect(res.status).toBe(201);
  return RegistrationSchema.parse(await res.json()).client_id;
}

/** A registered client with a fresh PKCE pair: where every authorization test starts. */
export async function startClient(name?: string): Promise<{ clientId: string; verifier: string; challenge: string }> {
  const clientId = await registerClient(name);
  return { clientId, ...(await pkcePair()) };
}

export function authorizeUrl(p: {
  clientId: string;
  challenge: string;
  state?: string;
  redirectUri?: string;
  method?: string;
  /** The RFC 8707 resource to ask for; `null` leaves the parameter out. */
  resource?: string | null;
}): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: p.clientId,
    redirect_uri: p.redirectUri ?? CALLBACK,
    scope: 'data:read',
    state: p.state ?? 'state-123',
    code_challenge: p.challenge,
    code_challenge_method: p.method ?? 'S256',
  });
  if (p.resource !== null) q.set('resource', p.resource ?? MCP_URL);
  return `/authorize?${q}`;
}

export const TokenResponseSchema = z.object({
  access_token: z.string(),
  token_type: z.string(),
  expires_in: z.number(),
  refresh_token: z.string(),
  scope: z.string(),
  resource: z.string().optional(),
});

/** POSTs to the token endpoint (form-encoded, as OAuth clients do). */
export function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The API's error body (`{ error: { code, message, requestId } }`), as the MCP endpoint and the front door send it. */
export const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string(), requestId: z.string() }) });

/** An OAuth error answer of the token endpoint or the provider (RFC 6749 section 5.2). */
export const OAuthErrorSchema = z.object({ error: z.string(), error_description: z.string().optional() });

/** Exchanges an authorization code (PKCE) at the token endpoint; `resource` null leaves the RFC 8707 parameter out. */
export function codeRequest(p: {
  code: string;
  clientId: string;
  verifier: string;
  redirectUri?: string;
  resource?: string | null;
}): Promise<Response> {
  const fields: Record<string, string> = {
    grant_type: 'authorization_code',
    code: p.code,
    redirect_uri: p.redirectUri ?? CALLBACK,
    client_id: p.clientId,
    code_verifier: p.verifier,
  };
  if (p.resource !== null) fields.resource = p.resource ?? MCP_URL;
  return tokenRequest(fields);
}

/** Trades a refresh token at the token endpoint. */
export function refreshRequest(refreshToken: string, clientId: string): Promise<Response> {
  return tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
}

/** The CSRF token of the sign-in form at `url` (an /authorize URL or /admin/login), as a browser not signed in sees it. */
export async function signInCsrf(browser: TestBrowser, url: string): Promise<string> {
  return inputValue(await (await browser.get(url)).text(), 'csrf');
}

/** Signs in on the sign-in form of `url` (an /authorize URL); the answer is a 303 back to it on success. */
export async function signIn(browser: TestBrowser, url: string, user: { email: string; password: string }): Promise<Response> {
  return browser.post(url, { intent: 'signin', csrf: await signInCsrf(browser, url), email: user.email, password: user.password });
}

/** What the consent form's boxes allow; the tests' default ticks both (the page ticks reports only). */
export interface ConsentWrites {
  memories: boolean;
  reports: boolean;
}
const ALLOW_ALL: ConsentWrites = { memories: true, reports: true };

/**
 * Signs in through /authorize and approves: the whole browser part of the flow. Returns the authorization code.
 */
export async function approveInBrowser(
  browser: TestBrowser,
  admin: { email: string; password: string },
  clientId: string,
  challenge: string,
  redirectUri = CALLBACK,
  writes: ConsentWrites = ALLOW_ALL,
): Promise<{ code: string; consentHtml: string }> {
  const url = authorizeUrl({ clientId, challenge, redirectUri });
  const first = await browser.get(url);
  expect(first.status).toBe(200);
  let page = await first.text();
  if (page.includes('name="intent" value="signin"')) {
    const signedIn = await browser.post(url, {
      intent: 'signin',
      csrf: inputValue(page, 'csrf'),
      email: admin.email,
      password: admin.password,
    });
    expect(signedIn.status, await signedIn.clone().text()).toBe(303);
    const consent = await browser.get(`${location(signedIn).pathname}${location(signedIn).search}`);
    expect(consent.status).toBe(200);
    page = await consent.text();
  }
  const decided = await browser.post('/authorize', {
    intent: 'consent',
    csrf: inputValue(page, 'csrf'),
    handle: inputValue(page, 'handle'),
    decision: 'allow',
    ...(writes.memories ? { write_memories: 'on' } : {}),
    ...(writes.reports ? { write_reports: 'on' } : {}),
  });
  expect(decided.status).toBe(302);
  const redirect = location(decided);
  expect(`${redirect.origin}${redirect.pathname}`).toBe(redirectUri.replace(/\?.*$/, ''));
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code in ${redirect}`);
  return { code, consentHtml: page };
}

/** The whole flow for one admin: register, sign in, approve, exchange the code. */
export async function connectAssistant(
  admin: { email: string; password: string },
  browser = new TestBrowser(),
  writes: ConsentWrites = ALLOW_ALL,
) {
  const { clientId, verifier, challenge } = await startClient();
  const { code } = await approveInBrowser(browser, admin, clientId, challenge, CALLBACK, writes);
  const res = await codeRequest({ code, clientId, verifier });
  expect(res.status).toBe(200);
  return { clientId, browser, tokens: TokenResponseSchema.parse(await res.json()) };
}

/** The MCP SDK's own client over Streamable HTTP with a bearer token, through the Worker's fetch. */
export async function mcpClient(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: (url, init) => SELF.fetch(url, init),
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'oauth-test-assistant', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The names of the tools a client with this token (or API key) sees. */
export async function toolNamesOver(token: string): Promise<string[]> {
  const client = await mcpClient(token);
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((t) => t.name);
}

const BrandsSchema = z.object({ brands: z.array(z.object({ brandId: z.string() })) });

/** The brands list_brands answers a client with this token (or API key). */
export async function brandIdsOver(token: string): Promise<string[]> {
  const client = await mcpClient(token);
  const result = await client.callTool({ name: 'list_brands', arguments: {} });
  await client.close();
  expect(result.isError ?? false).toBe(false);
  return BrandsSchema.parse(result.structuredContent).brands.map((b) => b.brandId);
}

/**
 * A raw JSON-RPC tools/list POST, to see HTTP status and headers a client sees; `mcpUrl` another origin's endpoint
 * (same Worker, same KV: a different resource identifier).
 */
export function rawToolsList(token: string | null, mcpUrl = MCP_URL): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return SELF.fetch(mcpUrl, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) });
}

/** Adds a user who signs in but administers nothing. */
export async function addUser(id: string, email: string, password: string): Promise<void> {
  const h = await hashPassword(password);
  await env.DB.prepare(
    'INSERT INTO users (id, email, name, password_hash, password_salt, password_iterations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  )
    .bind(id, email, null, h.hash, h.salt, h.iterations, Date.now())
    .run();
}

/** What one outbound URL answers in a test: a JSON value (or raw text), a status, and how long it stalls first. */
export interface OutboundAnswer {
  body: unknown;
  status?: number;
  stallMs?: number;
}

function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

/**
 * The Worker's outbound HTTPS for one test, with no network: the URLs given answer as told, loopback (the local
 * warehouse) goes through, anything else fails like an unreachable host. The pinned
 * @cloudflare/vitest-pool-workers (0.15) no longer exports `fetchMock`; the Worker under test runs in the test's
 * isolate, so replacing `globalThis.fetch` intercepts every outbound request it (and the OAuth library) makes.
 * `calls` lists every URL asked for, so a test can prove a document was never fetched. Call `restore()` after.
 */
export function serveOutbound(answers: Record<string, OutboundAnswer>): { calls: string[]; restore: () => void } {
  const calls: string[] = [];
  const realFetch = globalThis.fetch;
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    if (isLoopbackUrl(url)) return realFetch(input, init);
    calls.push(url);
    const answer = answers[url];
    if (!answer) throw new TypeError(`network connection refused in tests: ${url}`);
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    if (answer.stallMs) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, answer.stallMs);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new DOMException('The operation was aborted', 'AbortError'));
        });
      });
    }
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    return new Response(text, { status: answer.status ?? 200, headers: { 'content-type': 'application/json' } });
  });
  return { calls, restore: () => spy.mockRestore() };
}
