// The page's rows/s chart: horizontal bars per model (one per dataset) as inline SVG,
// drawn by the page itself (no chart library). Colour-blind-safe (Okabe–Ito) palette.
import { formatNumber } from "./summary.js";

const SVG = "http://www.w3.org/2000/svg";
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
const BAR = 18;
const GAP = 10;
const LABEL_W = 190;
const PLOT_W = 460;
const VALUE_W = 90;

function el(name, attrs = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  return node;
}

/** A label that fits the chart's label column: cut with "…" (the full text in its <title>). */
function label(x, y, text, max = 23) {
  const shown = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  const node = el("text", { x, y, "text-anchor": "end", class: "chart-label" }, shown);
  if (shown !== text) node.append(el("title", {}, text));
  return node;
}

/** Round `max` up to 1, 2 or 5 × a power of ten (a readable axis end). */
function niceMax(max) {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((f) => f * power).find((v) => v >= max);
}

/**
 * An <svg> of median rows/s per model and dataset from summarize()'s entries; the
 * title and a text description make it readable to screen readers.
 */
export function rowsPerSecondChart(summaries, title = "Throughput: median rows per second") {
  const models = [...new Set(summaries.map((s) => s.model))];
  const datasets = [...new Set(summaries.map((s) => s.dataset))];
  const top = 34;
  const groupH = datasets.length * BAR + GAP;
  const height = top + models.length * groupH + 30;
  const width = LABEL_W + PLOT_W + VALUE_W;
  const xMax = niceMax(Math.max(...summaries.map((s) => s.rowsPerS).filter(Number.isFinite)));
  const x = (v) => LABEL_W + (Math.min(v, xMax) / xMax) * PLOT_W;
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
    "aria-labelledby": "chart-title chart-desc" });
  svg.append(el("title", { id: "chart-title" }, title));
  svg.append(el("desc", { id: "chart-desc" }, summaries.map((s) =>
    `${s.model} on ${s.dataset}: ${formatNumber(s.rowsPerS)} rows/s`).join("; ")));
  svg.append(el("text", { x: LABEL_W, y: 16, class: "chart-title" }, title));
  datasets.forEach((d, j) => {
    const lx = LABEL_W + j * 150;
    svg.append(el("rect", { x: lx, y: 22, width: 10, height: 10, fill: PALETTE[j % PALETTE.length] }));
    svg.append(el("text", { x: lx + 14, y: 31, class: "chart-legend" }, d));
  });
  const bottom = top + models.length * groupH;
  for (const f of [0, 0.5, 1]) {
    const gx = LABEL_W + f * PLOT_W;
    svg.append(el("line", { x1: gx, x2: gx, y1: top, y2: bottom, class: "chart-grid" }));
    svg.append(el("text", { x: gx, y: bottom + 16, "text-anchor": "middle", class: "chart-axis" },
      formatNumber(f * xMax)));
  }
  svg.append(el("text", { x: LABEL_W + PLOT_W / 2, y: bottom + 28, "text-anchor": "middle",
    class: "chart-axis" }, "rows per second (test rows / total inference time)"));
  models.forEach((m, i) => {
    const gy = top + i * groupH;
    svg.append(label(LABEL_W - 8, gy + (datasets.length * BAR) / 2 + 4, m));
    datasets.forEach((d, j) => {
      const s = summaries.find((e) => e.model === m && e.dataset === d);
      if (!s) return;
      const y = gy + j * BAR;
      svg.append(el("rect", { x: LABEL_W, y: y + 2, width: Math.max(1, x(s.rowsPerS) - LABEL_W),
        height: BAR - 4, fill: PALETTE[j % PALETTE.length], class: "chart-bar" }));
      svg.append(el("text", { x: x(s.rowsPerS) + 4, y: y + BAR - 5, class: "chart-value" },
        formatNumber(s.rowsPerS)));
    });
  });
  return svg;
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};

/**
 * The stage legend's entries placed left to right from the plot's left edge, wrapped onto a
 * new line before one would pass `width`; each name is every bar's name of that stage
 * (e.g. "layer 0 / row 0"), so the legend and the bars never disagree.
 */
function legendLayout(legend, width) {
  const placed = [];
  let lx = LABEL_W;
  let ly = 22;
  legend.forEach((n) => {
    const w = 14 + 7 * n.length + 14;
    if (lx > LABEL_W && lx + w > width) { lx = LABEL_W; ly += 16; }
    placed.push({ n, lx, ly });
    lx += w;
  });
  return placed;
}

/**
 * An <svg> of where the time goes: per model × dataset one stacked bar of the median
 * wall ms of each stage over splits (embed, layer 0, layer 1, …, head), from the rows'
 * `stages` (resultRow); a legend names the stages.
 */
export function stageChart(rows, title = "Where the time goes: median ms per stage") {
  const keys = [...new Set(rows.map((r) => `${r.model}\u0000${r.dataset}`))];
  const nLayers = Math.max(...rows.map((r) => r.stages.layers.length));
  const names = ["embed", ...Array.from({ length: nLayers }, (_, l) => `layer ${l}`), "head"];
  const bars = keys.map((key) => {
    const mine = rows.filter((r) => `${r.model}\u0000${r.dataset}` === key);
    const parts = names.map((_, i) => median(mine.map((r) => {
      const st = r.stages;
      if (i === 0) return st.embed;
      return i <= st.layers.length ? st.layers[i - 1] : i === names.length - 1 ? st.head : 0;
    })));
    // the model's own names of its layers where it gives them (tabicl: row blocks, ICL layers)
    const own = mine[0].stages.layerNames;
    const ownLayers = mine[0].stages.layers.length;
    // a stage the model lacks (knn's one layer padded to tabicl's four) is named "" and
    // left out of the legend
    const stageNames = names.map((n, i) => (i >= 1 && i <= nLayers && i > ownLayers ? ""
      : own && i >= 1 && i <= own.length ? own[i - 1] : n));
    return { label: key.replace("\u0000", " · "), parts, stageNames };
  });
  const width = LABEL_W + PLOT_W + VALUE_W;
  const legendAt = legendLayout(names.map((_, i) =>
    [...new Set(bars.map((b) => b.stageNames[i]).filter(Boolean))].join(" / ")), width);
  const legend = legendAt.map((e) => e.n);
  const top = legendAt[legendAt.length - 1].ly + 18;
  const height = top + bars.length * (BAR + 4) + 30;
  const xMax = niceMax(Math.max(...bars.map((b) => b.parts.reduce((a, v) => a + v, 0))));
  const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
    "aria-labelledby": "stage-title stage-desc" });
  svg.append(el("title", { id: "stage-title" }, title));
  svg.append(el("desc", { id: "stage-desc" }, bars.map((b) => `${b.label}: ` +
    b.parts.flatMap((v, i) => (b.stageNames[i] ? [`${b.stageNames[i]} ${formatNumber(v)} ms`] : []))
      .join(", ")).join("; ")));
  svg.append(el("text", { x: LABEL_W, y: 16, class: "chart-title" }, title));
  legendAt.forEach(({ n, lx, ly }, i) => {
    svg.append(el("rect", { x: lx, y: ly, width: 10, height: 10, fill: PALETTE[i % PALETTE.length] }));
    svg.append(el("text", { x: lx + 14, y: ly + 9, class: "chart-legend" }, n));
  });
  bars.forEach((b, j) => {
    const y = top + j * (BAR + 4);
    svg.append(label(LABEL_W - 8, y + BAR - 5, b.label));
    let x = LABEL_W;
    b.parts.forEach((v, i) => {
      const w = (v / xMax) * PLOT_W;
      const rect = el("rect", { x, y, width: Math.max(0, w), height: BAR, fill: PALETTE[i % PALETTE.length],
        class: "chart-stage", "data-stage": b.stageNames[i] });
      rect.append(el("title", {}, `${b.label}: ${b.stageNames[i]} ${formatNumber(v)} ms`));
      svg.append(rect);
      // a bar's own stage name where the legend gives that colour more than one name
      if (legend[i].includes(" / ") && w >= 34) {
        svg.append(el("text", { x: x + w / 2, y: y + BAR - 5, "text-anchor": "middle", class: "chart-inbar" },
          b.stageNames[i]));
      }
      x += w;
    });
    svg.append(el("text", { x: x + 4, y: y + BAR - 5, class: "chart-value" },
      `${formatNumber(b.parts.reduce((a, v) => a + v, 0))} ms`));
  });
  const bottom = top + bars.length * (BAR + 4);
  svg.append(el("text", { x: LABEL_W + PLOT_W / 2, y: bottom + 22, "text-anchor": "middle",
    class: "chart-axis" }, `wall ms per split (axis to ${formatNumber(xMax)} ms)`));
  return svg;
}
