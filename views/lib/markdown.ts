import { el } from './host';

// The report's instructions are short markdown written by administrators. This renders the part of markdown
// they use (headings, paragraphs, bullet lists, `code`, **bold**) as DOM nodes built from text, never as HTML,
// so nothing in an instruction can inject markup or load anything.

function inline(text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  const re = /`([^`]+)`|\*\*([^*]+)\*\*/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(m[1] !== undefined ? el('code', undefined, m[1]) : el('strong', undefined, m[2] ?? ''));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const HEADINGS = ['h3', 'h4', 'h5', 'h6'] as const;

export function renderMarkdown(source: string): HTMLElement {
  const root = el('div', 'instructions');
  let paragraph: string[] = [];
  let list: HTMLUListElement | null = null;
  const flush = () => {
    if (paragraph.length > 0) root.append(el('p', undefined, ...inline(paragraph.join(' '))));
    paragraph = [];
    list = null;
  };
  for (const raw of source.split('\n')) {
    const line = raw.trim();
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^[-*]\s+(.*)$/.exec(line);
    if (line === '') {
      flush();
    } else if (heading) {
      flush();
      // Headings sit under the view's own h1/h2: the shallowest instruction heading becomes an h3.
      const tag = HEADINGS[Math.min(HEADINGS.length - 1, (heading[1]?.length ?? 1) - 1)] ?? 'h6';
      root.append(el(tag, undefined, ...inline(heading[2] ?? '')));
    } else if (bullet) {
      if (paragraph.length > 0) flush();
      if (!list) {
        list = el('ul');
        root.append(list);
      }
      list.append(el('li', undefined, ...inline(bullet[1] ?? '')));
    } else {
      list = null;
      paragraph.push(line);
    }
  }
  flush();
  return root;
}
