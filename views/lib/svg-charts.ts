import { type ChartModel, type Point, summarize } from './chart-data';
import { type Formatter, labelOf } from './format';

// Hand-written SVG for the three chart types the catalog uses (bar, line, pie). Drawn at the container's real
// width (and redrawn when it changes) so text stays legible from a 390 px phone to a wide desktop. Colours come
// from CSS classes (s0..s5), so light and dark themes restyle charts without redrawing.

const SVG_NS = 'http://www.w3.org/2000/svg';
let nextId = 0;

function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function titled<E extends SVGElement>(el: E, title: string): E {
  el.append(svgEl('title', {}, title));
  return el;
}

function root(width: number, height: number, label: string, captionId: string): SVGSVGElement {
  const svg = svgEl('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': captionId });
  svg.append(svgEl('desc', {}, label));
  return svg;
}

/** Keeps the end of a long label visible as an ellipsis instead of running under the bars. */
function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(1, maxChars - 1))}…`;
}

function barChart(model: Extract<ChartModel, { type: 'bar' | 'line' }>, width: number, fmt: Formatter, captionId: string): SVGSVGElement {
  const rowH = 26;
  const gap = 18;
  const labelW = Math.min(180, Math.round(width * 0.34));
  const valueW = Math.min(110, Math.round(width * 0.24));
  const plotW = Math.max(40, width - labelW - valueW - 16);
  const n = model.series[0]?.points.length ?? 0;
  const blockH = (s: number) => (model.series.length > 1 ? 22 : 0) + n * rowH + (s < model.series.length - 1 ? gap : 0);
  const height = model.series.reduce((h, _s, i) => h + blockH(i), 0) + 4;
  const svg = root(
    width,
    height,
    `Bar chart of ${model.series.map((s) => labelOf(s.column.name)).join(', ')} by ${labelOf(model.x.name)}`,
    captionId,
  );
  let y = 0;
  model.series.forEach((series, si) => {
    if (model.series.length > 1) {
      svg.append(svgEl('text', { x: 0, y: y + 15, class: 'chart-heading' }, labelOf(series.column.name)));
      y += 22;
    }
    const max = Math.max(0, ...series.points.map((p) => p.value ?? 0));
    const min = Math.min(0, ...series.points.map((p) => p.value ?? 0));
    const span = max - min || 1;
    const zero = labelW + ((0 - min) / span) * plotW;
    for (const p of series.points) {
      const v = p.value ?? 0;
      const x0 = labelW + ((Math.min(0, v) - min) / span) * plotW;
      const w = (Math.abs(v) / span) * plotW;
      const value = p.value === null ? 'null' : fmt.number(p.value, series.column.type);
      svg.append(
        svgEl(
          'text',
          { x: labelW - 8, y: y + rowH / 2 + 4, 'text-anchor': 'end', class: 'chart-label' },
          clip(p.label, Math.floor(labelW / 7)),
        ),
      );
      svg.append(
        titled(
          svgEl('rect', {
            x: x0,
            y: y + 4,
            width: Math.max(w, p.value === null ? 0 : 1),
            height: rowH - 8,
            rx: 2,
            class: `bar s${si % 6}`,
            'data-value': p.value ?? '',
          }),
          `${p.label}: ${value}`,
        ),
      );
      svg.append(svgEl('text', { x: labelW + plotW + 6, y: y + rowH / 2 + 4, class: 'chart-value' }, value));
      y += rowH;
    }
    svg.append(svgEl('line', { x1: zero, x2: zero, y1: y - n * rowH, y2: y, class: 'axis' }));
    if (si < model.series.length - 1) y += gap;
  });
  return svg;
}

function lineChart(model: Extract<ChartModel, { type: 'bar' | 'line' }>, width: number, fmt: Formatter, captionId: string): SVGSVGElement {
  // One panel per series (small multiples): revenue and orders differ by orders of magnitude, so one shared axis
  // would flatten all but the largest.
  const panelH = 150;
  const head = 30;
  const left = 48;
  const right = 12;
  const bottom = 22;
  const height = model.series.length * (head + panelH + bottom) + 4;
  const svg = root(
    width,
    height,
    `Line chart of ${model.series.map((s) => labelOf(s.column.name)).join(', ')} by ${labelOf(model.x.name)}`,
    captionId,
  );
  const plotW = Math.max(40, width - left - right);
  model.series.forEach((series, si) => {
    const top = si * (head + panelH + bottom);
    svg.append(svgEl('text', { x: 0, y: top + 14, class: 'chart-heading' }, labelOf(series.column.name)));
    const pts = series.points;
    const values = pts.map((p) => p.value).filter((v): v is number => v !== null);
    const max = Math.max(...values, 0);
    const min = Math.min(...values, 0);
    const span = max - min || 1;
    const py = (v: number) => top + head + panelH - ((v - min) / span) * panelH;
    const px = (i: number) => left + (pts.length <= 1 ? plotW / 2 : (i / (pts.length - 1)) * plotW);
    svg.append(svgEl('line', { x1: left, x2: left + plotW, y1: py(min), y2: py(min), class: 'axis' }));
    svg.append(svgEl('text', { x: left - 6, y: py(max) + 4, 'text-anchor': 'end', class: 'chart-value' }, fmt.compact(max)));
    svg.append(svgEl('text', { x: left - 6, y: py(min) + 4, 'text-anchor': 'end', class: 'chart-value' }, fmt.compact(min)));
    const first = pts[0];
    const last = pts[pts.length - 1];
    const baseY = top + head + panelH + 16;
    if (first) svg.append(svgEl('text', { x: left, y: baseY, class: 'chart-label' }, first.label));
    if (last && pts.length > 1)
      svg.append(svgEl('text', { x: left + plotW, y: baseY, 'text-anchor': 'end', class: 'chart-label' }, last.label));
    // A null breaks the line: no value is invented for it.
    let d = '';
    let pen = false;
    pts.forEach((p, i) => {
      if (p.value === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${px(i).toFixed(1)},${py(p.value).toFixed(1)}`;
      pen = true;
    });
    svg.append(svgEl('path', { d, class: `line s${si % 6}`, fill: 'none' }));
    if (pts.length <= 62) {
      pts.forEach((p, i) => {
        if (p.value === null) return;
        svg.append(
          titled(
            svgEl('circle', { cx: px(i), cy: py(p.value), r: 3, class: `dot s${si % 6}` }),
            `${p.label}: ${fmt.number(p.value, series.column.type)}`,
          ),
        );
      });
    }
  });
  return svg;
}

function pieChart(model: Extract<ChartModel, { type: 'pie' }>, width: number, fmt: Formatter, captionId: string): HTMLElement {
  const size = Math.min(220, width);
  const r = size / 2 - 4;
  const c = size / 2;
  const svg = root(size, size, `Pie chart of ${labelOf(model.value.name)} by ${labelOf(model.label.name)}`, captionId);
  const total = model.slices.reduce((s, p) => s + (p.value ?? 0), 0);
  let angle = -Math.PI / 2;
  const legend = document.createElement('ul');
  legend.className = 'legend';
  model.slices.forEach((p: Point, i) => {
    const share = total > 0 ? (p.value ?? 0) / total : 0;
    const end = angle + share * 2 * Math.PI;
    const text = `${p.label}: ${fmt.number(p.value ?? 0, model.value.type)} (${fmt.number(share * 100, 'FLOAT64')}%)`;
    let shape: SVGElement;
    if (share >= 0.9999) {
      shape = svgEl('circle', { cx: c, cy: c, r, class: `slice s${i % 6}` });
    } else {
      const large = end - angle > Math.PI ? 1 : 0;
      const [x1, y1, x2, y2] = [c + r * Math.cos(angle), c + r * Math.sin(angle), c + r * Math.cos(end), c + r * Math.sin(end)];
      shape = svgEl('path', {
        d: `M${c},${c}L${x1.toFixed(2)},${y1.toFixed(2)}A${r},${r} 0 ${large} 1 ${x2.toFixed(2)},${y2.toFixed(2)}Z`,
        class: `slice s${i % 6}`,
      });
    }
    svg.append(titled(shape, text));
    const item = document.createElement('li');
    const swatch = document.createElement('span');
    swatch.className = `swatch s${i % 6}`;
    swatch.setAttribute('aria-hidden', 'true');
    item.append(swatch, document.createTextNode(text));
    legend.append(item);
    angle = end;
  });
  const wrap = document.createElement('div');
  wrap.className = 'pie';
  wrap.append(svg, legend);
  return wrap;
}

/**
 * A figure with the chart and its text summary (the figcaption, which also labels the drawing). Redrawn at the
 * container's width whenever that changes.
 */
export function chartFigure(model: ChartModel, fmt: Formatter): HTMLElement {
  const figure = document.createElement('figure');
  figure.className = 'chart';
  figure.dataset.chart = model.type;
  const captionId = `chart-summary-${++nextId}`;
  const drawing = document.createElement('div');
  drawing.className = 'chart-drawing';
  const caption = document.createElement('figcaption');
  caption.id = captionId;
  caption.className = 'chart-summary';
  caption.textContent = summarize(model, fmt).join(' ');
  figure.append(drawing, caption);

  let drawnWidth = -1;
  const draw = () => {
    const width = Math.floor(drawing.clientWidth || figure.clientWidth || 320);
    if (width === drawnWidth) return;
    drawnWidth = width;
    const el =
      model.type === 'pie'
        ? pieChart(model, width, fmt, captionId)
        : model.type === 'bar'
          ? barChart(model, width, fmt, captionId)
          : lineChart(model, width, fmt, captionId);
    drawing.replaceChildren(el);
  };
  new ResizeObserver(() => requestAnimationFrame(draw)).observe(drawing);
  queueMicrotask(draw);
  return figure;
}
