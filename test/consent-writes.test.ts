// What the console promises is what happens (issue 37): the consent page says what a connection may write (data-issue
// reports, memories), the administrator chooses, the connection can write only that, and its writes are recorded as
// "<assistant> for <user>". The Assistants page shows each connection's choice.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { oauthPrincipal } from '../src/auth/oauth-principal';
import type { OpContext } from '../src/context';
import { configOf } from '../src/env';
import { ApiError } from '../src/errors';
import { createMemory } from '../src/features/memories/memories';
import { createLogger } from '../src/lib/log';
import { page, signedIn } from './admin-client';
import { errorOf, okData } from './mcp-client';
import {
  authorizeUrl,
  codeRequest,
  connectAssistant,
  inputValue,
  location,
  mcpClient,
  signIn,
  startClient,
  TestBrowser,
  TokenResponseSchema,
  toolNamesOver,
} from './oauth-client';
import { seedDemo, TEST_ADMINS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

describe('the consent page', () => {
  it('says the connection reads only, and offers reports (ticked) and memories (not ticked) as writes to allow', async () => {
    const { clientId, challenge } = await startClient('Claude');
    const browser = new TestBrowser('198.51.100.91');
    const url = authorizeUrl({ clientId, challenge });
    expect((await signIn(browser, url, TEST_ADMINS.org)).status).toBe(303);
    const html = await (await browser.get(url)).text();
    expect(html).not.toContain('cannot change any data');
    expect(html).toContain('It cannot change any warehouse data');
    expect(html).toMatch(/<input type="checkbox" name="write_reports" value="on" checked=""\/>\s*File data-issue reports/);
    expect(html).toMatch(/<input type="checkbox" name="write_memories" value="on"\/>\s*Save memories/);
    expect(html).toContain(`recorded as <strong>Claude for ${TEST_ADMINS.org.email}</strong>`);
    // A browser's default submission (reports ticked, memories not) is what the connection gets.
    const decided = await browser.post('/authorize', {
      intent: 'consent',
      csrf: inputValue(html, 'csrf'),
      handle: inputValue(html, 'handle'),
      decision: 'allow',
      write_reports: 'on',
    });
    expect(decided.status).toBe(302);
    expect(location(decided).searchParams.get('code')).toMatch(/.+/);
  });
});

describe('what a connection may write', () => {
  it('without memories: save_memory is not offered and refused; reports are filed; the page shows the choice', async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.92'), { memories: false, reports: true });
    expect(await toolNamesOver(tokens.access_token)).not.toContain('save_memory');
    const client = await mcpClient(tokens.access_token);
    try {
      // Not registered for this connection, so a call is refused before any write path ...
      await expect(
        client.callTool({ name: 'save_memory', arguments: { brandId: 'brand_acme', title: 't', content: 'c' } }),
      ).rejects.toThrow(/save_memory not found/);
      // ... and the write operation itself refuses such a connection's principal.
      const principal = await oauthPrincipal(env, {
        grantId: 'grant_t',
        userId: 'user_demo_org_admin',
        writes: { memories: false, reports: true },
        clientName: 'Claude',
      });
      const ctx: OpContext = {
        env,
        config: configOf(env),
        principal,
        requestId: 'req_consent_test',
        log: createLogger('req_consent_test'),
        now: Date.now(),
        transport: 'mcp',
        origin: 'https://api.test',
        waitUntil: () => undefined,
      };
      const refused = await createMemory(ctx, { brandId: 'brand_acme', title: 't', content: 'c' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('MEMORY_WRITE_FORBIDDEN');
      expect((refused as ApiError).message).toContain('approved without saving memories');
      expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM memories WHERE title = 't'").first<number>('n')).toBe(0);
      const filed = okData(
        await client.callTool({ name: 'report_data_issue', arguments: { summary: 'Connection files', brandId: 'brand_acme' } }),
      );
      expect(filed.feedbackRef).toMatch(/^fb_/);
    } finally {
      await client.close();
    }
    const html = await page(await signedIn(TEST_ADMINS.org, '198.51.100.93'), '/admin/assistants');
    expect(html).toContain('<td data-label="May write">data-issue reports</td>');
    expect(html).toContain('they write only what that administrator allowed');
  });

  it('without reports: report_data_issue is refused and nothing is stored', async () => {
    const { tokens } = await connectAssistant(TEST_ADMINS.org, new TestBrowser('198.51.100.94'), { memories: false, reports: false });
    const client = await mcpClient(tokens.access_token);
    try {
      const summary = `Not allowed ${crypto.randomUUID()}`;
      const refused = errorOf(await client.callTool({ name: 'report_data_issue', arguments: { summary, brandId: 'brand_acme' } }));
      expect(refused.code).toBe('FEEDBACK_WRITE_FORBIDDEN');
      expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM feedback WHERE summary = ?').bind(summary).first<number>('n')).toBe(0);
    } finally {
      await client.close();
    }
    const html = await page(await signedIn(TEST_ADMINS.org, '198.51.100.95'), '/admin/assistants');
    expect(html).toContain('nothing (read only)');
  });

  it('with memories: a memory is recorded as "<assistant> for <user>", not as the person', async () => {
    const { clientId, verifier, challenge } = await startClient('Claude');
    const browser = new TestBrowser('198.51.100.96');
    const url = authorizeUrl({ clientId, challenge });
    expect((await signIn(browser, url, TEST_ADMINS.brand)).status).toBe(303);
    const html = await (await browser.get(url)).text();
    const decided = await browser.post('/authorize', {
      intent: 'consent',
      csrf: inputValue(html, 'csrf'),
      handle: inputValue(html, 'handle'),
      decision: 'allow',
      write_memories: 'on',
      write_reports: 'on',
    });
    const res = await codeRequest({ code: location(decided).searchParams.get('code') ?? '', clientId, verifier });
    const tokens = TokenResponseSchema.parse(await res.json());
    const client = await mcpClient(tokens.access_token);
    try {
      const saved = okData(
        await client.callTool({ name: 'save_memory', arguments: { title: 'orders grain', content: 'one row per order' } }),
      );
      expect(saved.author).toEqual({ kind: 'user', name: `Claude for ${TEST_ADMINS.brand.email}` });
      const rev = await env.DB.prepare('SELECT actor_name FROM memory_revisions WHERE memory_id = ?').bind(saved.memoryId).first();
      expect(rev).toEqual({ actor_name: `Claude for ${TEST_ADMINS.brand.email}` });
    } finally {
      await client.close();
    }
  });
});
