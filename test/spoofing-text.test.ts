import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemorySchema } from '../src/features/memories/memories.schemas';
import { nameProblem, neutralise, textProblem } from '../src/lib/text';
import { neutraliseOutsideFields } from '../src/web/render';
import { page, signedIn } from './admin-client';
import { inputValue } from './oauth-client';
import { expectError, postJson, seedDemo, TEST_ADMINS } from './seed';

/**
 * Text that spoofs what a reader sees: control characters are refused on write; right-to-left overrides,
 * zero-width characters and the like are stored as written and shown as [U+XXXX] on the admin pages.
 */

const RLO = '\u202E';
const ZWSP = '\u200B';

beforeAll(async () => {
  await seedDemo();
  await env.DB.prepare("UPDATE api_keys SET memories_write = 1 WHERE id = 'key_demo_org'").run();
});

describe('the rules', () => {
  it('names refuse every control character and line break; text allows tab and line breaks only', () => {
    for (const bad of ['a\u0000b', 'a\u0007', 'a\nb', 'a\tb', 'a\u007Fb', 'a\u0085b'])
      expect(nameProblem(bad), JSON.stringify(bad)).not.toBeNull();
    expect(nameProblem(`ok ${RLO} ${ZWSP} é 漢字`)).toBeNull();
    expect(textProblem('line\n\tindented\r\n')).toBeNull();
    expect(textProblem('a\u0000b')).toMatch(/U\+0000/);
  });

  it('neutralises controls, bidi controls and zero-width characters, and nothing else', () => {
    expect(neutralise(`invoice${RLO}fdp.exe`)).toBe('invoice[U+202E]fdp.exe');
    expect(neutralise(`a${ZWSP}b\u2066c\u0000d\uFEFF`)).toBe('a[U+200B]b[U+2066]c[U+0000]d[U+FEFF]');
    expect(neutralise('plain é 漢字 \n\t')).toBe('plain é 漢字 \n\t');
  });

  it('leaves form field values alone so an edit saves what is stored', () => {
    const html = `<h3>a${RLO}b</h3><input name="title" value="a${RLO}b"><textarea name="content">x${ZWSP}y</textarea><p title="t${ZWSP}">z</p>`;
    expect(neutraliseOutsideFields(html)).toBe(
      `<h3>a[U+202E]b</h3><input name="title" value="a${RLO}b"><textarea name="content">x${ZWSP}y</textarea><p title="t[U+200B]">z</p>`,
    );
  });
});

describe('on write', () => {
  it('REST refuses control characters in a memory title and content (400 VALIDATION naming the code point)', async () => {
    const title = expectError(
      await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', title: 'a\u0000b', content: 'c' }),
      400,
      'VALIDATION',
    );
    expect(title.message).toMatch(/title must not contain control characters \(found U\+0000\)/);
    const content = expectError(
      await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', title: 't', content: 'bell\u0007' }),
      400,
      'VALIDATION',
    );
    expect(content.message).toMatch(/U\+0007/);
    expect((await postJson('/v1/data/memories', 'org', { brandId: 'brand_acme', title: 't', content: 'line\n\tok' })).status).toBe(201);
  });

  it('the admin pages refuse a key name with a control character', async () => {
    const browser = await signedIn(TEST_ADMINS.org, '198.51.100.90');
    const res = await browser.post('/admin/keys', {
      csrf: inputValue(await page(browser), 'csrf'),
      name: 'evil\u0001key',
      scope: 'brand:brand_acme',
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('must not contain control characters');
    expect(await env.DB.prepare("SELECT 1 FROM api_keys WHERE name LIKE 'evil%'").first()).toBeNull();
  });
});

describe('on the admin pages', () => {
  it('a memory title with a right-to-left override and a zero-width space is shown neutralised, and edits keep it', async () => {
    const created = await postJson('/v1/data/memories', 'org', {
      brandId: 'brand_acme',
      title: `refund${RLO}gnp.exe${ZWSP}`,
      content: 'spoof',
    });
    expect(created.status).toBe(201);
    const memory = MemorySchema.parse(created.body);
    const browser = await signedIn(TEST_ADMINS.org, '198.51.100.91');
    const html = await page(browser, '/admin/memories');
    expect(html).toContain('refund[U+202E]gnp.exe[U+200B]');
    // Outside form fields the raw characters appear nowhere on the page.
    const outsideFields = html.replace(/<textarea\b[^>]*>[\s\S]*?<\/textarea>|\svalue="[^"]*"/g, '');
    expect(outsideFields).not.toContain(RLO);
    expect(outsideFields).not.toContain(ZWSP);
    // The edit form holds the stored title, so saving it unchanged stores the same text.
    expect(html).toContain(`value="refund${RLO}gnp.exe${ZWSP}"`);
    expect(memory.title).toBe(`refund${RLO}gnp.exe${ZWSP}`);
  });
});
