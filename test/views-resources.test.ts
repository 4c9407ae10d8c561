// The MCP Apps views as MCP resources, through the Worker inside workerd: resources/list names both `ui://`
// views with the MCP Apps MIME type, and resources/read returns the HTML the build put in the VIEWS assets
// (wrangler.toml [assets], served to this pool by @cloudflare/vitest-pool-workers), self-contained and with a CSP
// that declares no external domain.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { VIEWS } from '../src/mcp/views';
import { connectMcp, ERAS } from './mcp-client';
import { seedDemo, TEST_KEYS } from './seed';

beforeAll(async () => {
  await seedDemo();
});

const MCP_APP_MIME = 'text/html;profile=mcp-app';

describe('MCP Apps views as resources', () => {
  it.each(ERAS)('lists both views with the MCP Apps MIME type and a CSP without external domains (%s era)', async (era) => {
    const client = await connectMcp(TEST_KEYS.brand, era);
    const { resources } = await client.listResources();
    expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: false });
    await client.close();
    expect(resources.map((r) => r.uri).sort()).toEqual([VIEWS.report.uri, VIEWS.result.uri].sort());
    for (const r of resources) {
      expect(r.uri).toMatch(/^ui:\/\//);
      expect(r.mimeType).toBe(MCP_APP_MIME);
      expect(r.title).toBeTruthy();
      expect(r._meta).toEqual({ ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [] }, prefersBorder: true } });
    }
  });

  it.each(ERAS)('reads each view: the built HTML from the assets, whole and self-contained (%s era)', async (era) => {
    const client = await connectMcp(TEST_KEYS.brand, era);
    for (const view of Object.values(VIEWS)) {
      const { contents } = await client.readResource({ uri: view.uri });
      expect(contents).toHaveLength(1);
      const [content] = contents;
      expect(content?.uri).toBe(view.uri);
      expect(content?.mimeType).toBe(MCP_APP_MIME);
      const html = content && 'text' in content ? content.text : '';
      // Exactly the file the build wrote into the assets directory.
      const asset = await env.VIEWS.fetch(`https://assets.invalid/${view.file}`);
      expect(asset.status).toBe(200);
      expect(html).toBe(await asset.text());
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`);
      // Inline only: one inline script and no external script, stylesheet, font or image in the markup and CSS.
      const markup = html.replace(/<script type="module">[\s\S]*<\/script>/, '<script type="module"></script>');
      expect(html.length - markup.length).toBeGreaterThan(50_000);
      expect(markup.match(/\bsrc=|\bhref=|<link|@import|url\(/gi) ?? []).toEqual([]);
    }
    await client.close();
  });

  it('refuses an unknown ui:// resource', async () => {
    const client = await connectMcp(TEST_KEYS.brand);
    await expect(client.readResource({ uri: 'ui://warehouse-query-api/nope.html' })).rejects.toThrow(/not found/i);
    await client.close();
  });

  it('is not reachable by URL: the Worker answers, not the assets', async () => {
    const { SELF } = await import('cloudflare:test');
    const res = await SELF.fetch(`http://mcp.test/${VIEWS.result.file}`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain('<!doctype html>');
  });
});
