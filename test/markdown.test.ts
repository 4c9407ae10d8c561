// Memory content as Markdown on the admin pages: the safe subset of src/web/markdown.ts. Pure.
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../src/web/markdown';

describe('renderMarkdown', () => {
  it('renders the subset: paragraphs, headings, lists, code, emphasis, links, quotes', () => {
    const md = [
      '# Revenue',
      'Returns land in `fact__orders` about **7 days** after the sale, *usually*.',
      'Second line.',
      '',
      '- gross',
      '- net of _discounts_',
      '',
      '1. first',
      '2. second',
      '',
      '> a quote',
      '',
      '```',
      'SELECT * FROM t WHERE a < 1',
      '```',
      'See [the docs](https://example.com/a?b=1&c=2).',
    ].join('\n');
    expect(renderMarkdown(md)).toBe(
      [
        '<h4>Revenue</h4>',
        '<p>Returns land in <code>fact__orders</code> about <strong>7 days</strong> after the sale, <em>usually</em>.<br>Second line.</p>',
        '<ul><li>gross</li><li>net of <em>discounts</em></li></ul>',
        '<ol><li>first</li><li>second</li></ol>',
        '<blockquote>a quote</blockquote>',
        '<pre><code>SELECT * FROM t WHERE a &lt; 1</code></pre>',
        '<p>See <a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">the docs</a>.</p>',
      ].join('\n'),
    );
  });

  it('never lets markup, attributes or script URLs through', () => {
    const cases: [string, string][] = [
      ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
      ['<img src=x onerror=alert(1)>', '<p>&lt;img src=x onerror=alert(1)&gt;</p>'],
      ['[x](javascript:alert(1))', '<p>[x](javascript:alert(1))</p>'],
      [
        '[x](https://a.example/"onmouseover="alert(1))',
        '<p><a href="https://a.example/&quot;onmouseover=&quot;alert(1" rel="noopener noreferrer nofollow">x</a>)</p>',
      ],
      ['`<b>` and **<i>**', '<p><code>&lt;b&gt;</code> and <strong>&lt;i&gt;</strong></p>'],
      ['```\n</pre><script>x</script>\n```', '<pre><code>&lt;/pre&gt;&lt;script&gt;x&lt;/script&gt;</code></pre>'],
      ['# <h1>big</h1>', '<h4>&lt;h1&gt;big&lt;/h1&gt;</h4>'],
    ];
    for (const [md, html] of cases) expect(renderMarkdown(md)).toBe(html);
    // No tag in any output but the subset's own.
    const tags = cases.flatMap(([md]) => [...renderMarkdown(md).matchAll(/<\/?([a-z0-9]+)/g)].map((m) => m[1]));
    expect(new Set(tags)).toEqual(new Set(['p', 'a', 'code', 'strong', 'pre', 'h4']));
  });

  it('renders a table (header, alignment, inline formatting, an escaped bar) in a box of its own', () => {
    const md = ['Channels:', '', '| channel | share |', '|:---|---:|', '| web | **61%** |', '| a \\| b | `39%` |', '', 'after'].join('\n');
    expect(renderMarkdown(md)).toBe(
      [
        '<p>Channels:</p>',
        '<div class="md-table"><table><thead><tr><th scope="col">channel</th><th scope="col" class="al-right">share</th></tr></thead>' +
          '<tbody><tr><td>web</td><td class="al-right"><strong>61%</strong></td></tr>' +
          '<tr><td>a | b</td><td class="al-right"><code>39%</code></td></tr></tbody></table></div>',
        '<p>after</p>',
      ].join('\n'),
    );
    // Not a table without its separator row: the bars stay text.
    expect(renderMarkdown('| a | b |\n| c | d |')).toBe('<p>| a | b |<br>| c | d |</p>');
    // Cells are escaped like everything else.
    expect(renderMarkdown('| <b> |\n|---|\n| <script> |')).toContain('<td>&lt;script&gt;</td>');
  });

  it('shows an image as its alt text with a link to open it (the CSP loads no other site), a data: raster image inline', () => {
    expect(renderMarkdown('![Revenue by channel](https://cdn.example.com/c.png)')).toBe(
      '<p><span class="md-image"><span role="img" aria-label="Image: Revenue by channel">Image: Revenue by channel</span>' +
        '<a href="https://cdn.example.com/c.png" rel="noopener noreferrer nofollow">open image</a></span></p>',
    );
    expect(renderMarkdown('![dot](data:image/png;base64,iVBORw0KGgo=)')).toBe(
      '<p><img class="md-image" src="data:image/png;base64,iVBORw0KGgo=" alt="dot"></p>',
    );
    // Script-capable or unknown addresses are never loaded nor linked: the source stays text.
    expect(renderMarkdown('![x](data:image/svg+xml;base64,PHN2Zz4=)')).toBe('<p>![x](data:image/svg+xml;base64,PHN2Zz4=)</p>');
    expect(renderMarkdown('![x](javascript:alert(1))')).toBe('<p>![x](javascript:alert(1))</p>');
    // Alt text cannot close its attribute: its quotes were escaped with the rest of the source.
    expect(renderMarkdown('![" onerror="alert(1)](https://a.example/x.png)')).toContain(
      'aria-label="Image: &quot; onerror=&quot;alert(1)"',
    );
  });

  it('leaves a code span unformatted and keeps a lone asterisk', () => {
    expect(renderMarkdown('`**not bold**` 2 * 3')).toBe('<p><code>**not bold**</code> 2 * 3</p>');
  });
});
