// Float64 CPU reference of docs/models.md used only by the node tests, to check the
// WGSL kernels without Python. Straightforward loops; small inputs only.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { columnStats, targetStats } from "../src/data.js";
import { fmInputs } from "../src/tabular_fm.js";

function standardized(d, width) {
  const { n, m, F } = d;
  const s = columnStats(d.xTrain, n, F);
  const rows = (x, k) => Array.from({ length: k }, (_, i) => Array.from({ length: width },
    (_, f) => (f < F ? (x[i * F + f] - s.mean[f]) / s.std[f] : 0)));
  return [rows(d.xTrain, n), rows(d.xTest, m)];
}

const sqdist = (a, b) => a.reduce((acc, v, f) => acc + (v - b[f]) ** 2, 0);

export function refDistanceModel(model, d) {
  const [xc, xq] = standardized(d, d.F);
  const { n, C } = d;
  const out = [];
  for (const q of xq) {
    const dist = xc.map((c) => sqdist(q, c));
    if (model.name === "knn") {
      const k = Math.min(model.k ?? 5, n);
      const order = dist.map((v, j) => j).sort((a, b) => dist[a] - dist[b] || a - b).slice(0, k);
      if (!C) out.push(order.reduce((a, j) => a + d.yTrain[j], 0) / k);
      else for (let c = 0; c < C; c++) out.push((order.filter((j) => d.yTrain[j] === c).length + 1) / (k + C));
    } else {
      const T = model.temperature ?? d.F;
      const mn = Math.min(...dist);
      const w = dist.map((v) => Math.exp(-(v - mn) / T));
      const z = w.reduce((a, b) => a + b, 0);
      if (!C) out.push(w.reduce((a, v, j) => a + v * d.yTrain[j], 0) / z);
      else {
        for (let c = 0; c < C; c++) {
          const s = w.reduce((a, v, j) => a + (d.yTrain[j] === c ? v : 0), 0) / z;
          out.push((n * s + 1) / (n + C));
        }
      }
    }
  }
  return Float64Array.from(out);
}

const matmul = (A, W, b) => A.map((row) => b.map((bj, j) => row.reduce((a, v, k) => a + v * W[k][j], bj)));
function ln(X, g, b, eps) {
  return X.map((r) => {
    const mu = r.reduce((a, v) => a + v, 0) / r.length;
    const va = r.reduce((a, v) => a + (v - mu) ** 2, 0) / r.length;
    return r.map((v, j) => ((v - mu) / Math.sqrt(va + eps)) * g[j] + b[j]);
  });
}
const gelu = (x) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));
const add = (A, B) => A.map((r, i) => r.map((v, j) => v + B[i][j]));

export function refTransformer(weights, d) {
  const cfg = weights.config;
  const T = (name) => weights.tensors.get(name);
  const mat = (name, r, c) => Array.from({ length: r }, (_, i) => Array.from(T(name).subarray(i * c, (i + 1) * c)));
  const vec = (name) => Array.from(T(name));
  const D = cfg.d_model;
  const H = cfg.n_heads;
  const dh = D / H;
  const [xc, xq] = standardized(d, cfg.d_in);
  const reg = d.task === "regression";
  const ts = reg ? targetStats(d.yTrain) : null;
  let hc = matmul(xc, mat("embed.w", cfg.d_in, D), vec("embed.b"));
  hc = hc.map((r, i) => r.map((v, j) => v + (reg ? ((d.yTrain[i] - ts.mean) / ts.std) * T("label.reg")[j]
    : T("label.w")[d.yTrain[i] * D + j])));
  let hq = matmul(xq, mat("embed.w", cfg.d_in, D), vec("embed.b"));
  for (let l = 0; l < cfg.n_layers; l++) {
    const p = `layers.${l}.`;
    const ac = ln(hc, vec(`${p}ln1.g`), vec(`${p}ln1.b`), cfg.ln_eps);
    const K = matmul(ac, mat(`${p}attn.wk`, D, D), vec(`${p}attn.bk`));
    const V = matmul(ac, mat(`${p}attn.wv`, D, D), vec(`${p}attn.bv`));
    const step = (h) => {
      const a = ln(h, vec(`${p}ln1.g`), vec(`${p}ln1.b`), cfg.ln_eps);
      const Q = matmul(a, mat(`${p}attn.wq`, D, D), vec(`${p}attn.bq`));
      const O = Q.map((q) => {
        const o = new Array(D).fill(0);
        for (let hd = 0; hd < H; hd++) {
          const s = K.map((k) => q.slice(hd * dh, hd * dh + dh).reduce((acc, v, t) => acc + v * k[hd * dh + t], 0) / Math.sqrt(dh));
          const mx = Math.max(...s);
          const e = s.map((v) => Math.exp(v - mx));
          const z = e.reduce((x, y) => x + y, 0);
          for (let t = 0; t < dh; t++) o[hd * dh + t] = e.reduce((acc, w, j) => acc + w * V[j][hd * dh + t], 0) / z;
        }
        return o;
      });
      let h2 = add(h, matmul(O, mat(`${p}attn.wo`, D, D), vec(`${p}attn.bo`)));
      const m2 = ln(h2, vec(`${p}ln2.g`), vec(`${p}ln2.b`), cfg.ln_eps);
      const mid = matmul(m2, mat(`${p}mlp.w1`, D, cfg.d_mlp), vec(`${p}mlp.b1`)).map((r) => r.map(gelu));
      h2 = add(h2, matmul(mid, mat(`${p}mlp.w2`, cfg.d_mlp, D), vec(`${p}mlp.b2`)));
      return h2;
    };
    hq = step(hq);
    hc = step(hc);
  }
  const z = ln(hq, vec("head.ln.g"), vec("head.ln.b"), cfg.ln_eps);
  if (reg) {
    const wr = vec("head.reg.w");
    return Float64Array.from(z.map((r) => (r.reduce((a, v, j) => a + v * wr[j], 0) + T("head.reg.b")[0]) * ts.std + ts.mean));
  }
  const logits = matmul(z, mat("head.cls.w", D, cfg.max_classes), vec("head.cls.b"));
  const out = [];
  for (const r of logits) {
    const v = r.slice(0, d.C);
    const mx = Math.max(...v);
    const e = v.map((x) => Math.exp(x - mx));
    const s = e.reduce((a, b) => a + b, 0);
    out.push(...e.map((x) => x / s));
  }
  return Float64Array.from(out);
}

/** Model name → its float64 reference `(model, data) → Float64Array`, one per registry model. */
/** tabular_fm in float64 loops (docs/models.md), on fmInputs' standardized rows. */
export function refTabularFM(weights, d) {
  const cfg = weights.config;
  const W = (name) => weights.tensors.get(name);
  const { d_model: D, n_heads: H } = cfg;
  const dh = D / H;
  const inp = fmInputs(d, cfg);
  const T = d.F + 1;
  const token = (x, r, y, mode) => Array.from({ length: T }, (_, j) => Array.from({ length: D }, (_, e) => {
    if (j < d.F) return x[r * d.F + j] * W("cell.w")[e] + W("cell.b")[e] + W("feature.emb")[j * D + e];
    if (mode === "cls") return W("target.cls")[y * D + e];
    if (mode === "reg") return y * W("target.reg.w")[e] + W("target.reg.b")[e];
    return W("target.unknown")[e];
  }));
  const mode = inp.tstats ? "reg" : "cls";
  let h = [...Array.from({ length: inp.n }, (_, r) => token(inp.x, r, inp.y[r], mode)),
    ...Array.from({ length: d.m }, (_, r) => token(inp.queries, r, 0, "q"))];
  const lin = (v, name) => { const w = W(`${name}.w`), b = W(`${name}.b`); const out = b.length;
    return Array.from({ length: out }, (_, o) => v.reduce((a, x, k) => a + x * w[k * out + o], b[o])); };
  const lnv = (v, name) => ln([v], W(`${name}.g`), W(`${name}.b`), cfg.ln_eps)[0];
  const attend = (q, keys, values) => {
    const out = new Array(D).fill(0);
    for (let hd = 0; hd < H; hd++) {
      const s = keys.map((k) => q.slice(hd * dh, (hd + 1) * dh).reduce((a, x, i) => a + x * k[hd * dh + i], 0) / Math.sqrt(dh));
      const mx = Math.max(...s);
      const e = s.map((x) => Math.exp(x - mx));
      const z = e.reduce((a, b) => a + b, 0);
      for (let i = 0; i < dh; i++) out[hd * dh + i] = values.reduce((a, v, j) => a + (e[j] / z) * v[hd * dh + i], 0);
    }
    return out;
  };
  for (let l = 0; l < cfg.n_layers; l++) {
    const p = `layers.${l}.`;
    h = h.map((row) => {
      const a = row.map((t) => lnv(t, `${p}fa.ln`));
      const [q, k, v] = ["q", "k", "v"].map((n) => a.map((t) => lin(t, `${p}fa.${n}`)));
      return row.map((t, i) => add([t], [lin(attend(q[i], k, v), `${p}fa.o`)])[0]);
    });
    const a = h.map((row) => row.map((t) => lnv(t, `${p}ra.ln`)));
    const k = a.slice(0, inp.n).map((row) => row.map((t) => lin(t, `${p}ra.k`)));
    const v = a.slice(0, inp.n).map((row) => row.map((t) => lin(t, `${p}ra.v`)));
    h = h.map((row, r) => row.map((t, i) => {
      const o = attend(lin(a[r][i], `${p}ra.q`), k.map((kr) => kr[i]), v.map((vr) => vr[i]));
      const t2 = add([t], [lin(o, `${p}ra.o`)])[0];
      const m = lin(lnv(t2, `${p}mlp.ln`), `${p}mlp.w1`).map(gelu);
      return add([t2], [lin(m, `${p}mlp.w2`)])[0];
    }));
  }
  return fmHead(h.slice(inp.n).map((row) => lnv(row[T - 1], "head.ln")), inp, d, lin);
}

/** The head of refTabularFM on the LayerNormed target tokens `z` of the query rows. */
function fmHead(z, inp, d, lin) {
  const out = [];
  for (const zr of z) {
    const o = lin(zr, inp.tstats ? "head.reg" : "head.cls");
    if (inp.tstats) {
      out.push(o[0] * inp.tstats.std + inp.tstats.mean);
      continue;
    }
    const logits = o.slice(0, d.C);
    const mx = Math.max(...logits);
    const e = logits.map((x) => Math.exp(x - mx));
    const s = e.reduce((a, b) => a + b, 0);
    out.push(...e.map((x) => x / s));
  }
  return Float64Array.from(out);
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The repository's Python ($ARENALITE_PYTHON or .venv-pins/bin/python), or null (skipped). */
export const PYTHON = process.env.ARENALITE_SKIP_PYTHON === "1" ? null
  : [process.env.ARENALITE_PYTHON, `${ROOT}.venv-pins/bin/python`].find((p) => p && existsSync(p)) ?? null;

const TABICL_PREDICT = `
import json, sys
import numpy as np
from arenalite import models
job = json.load(sys.stdin)
F = job["nFeatures"]
x_train = np.asarray(job["xTrain"], dtype=np.float64).reshape(-1, F)
x_test = np.asarray(job["xTest"], dtype=np.float64).reshape(-1, F)
out = models.predict(job["model"], x_train, np.asarray(job["yTrain"], dtype=np.float64), x_test,
                     job["task"], job.get("nClasses"))
json.dump(np.asarray(out, dtype=np.float64).ravel().tolist(), sys.stdout)
`;

/**
 * tabicl's reference: Python's arenalite.models.predict (the numpy forward, the package's
 * preprocessing and ensemble) run at test time on the same data; `model.weights` is the
 * checkpoint's path. Throws without the repository's Python.
 */
export function refTabicl(model, d) {
  if (!PYTHON) throw new Error("the tabicl reference needs the repository's Python (.venv-pins/bin/python or $ARENALITE_PYTHON)");
  const pyModel = Object.fromEntries(Object.entries(model).filter(([k]) => k !== "batchRows"));
  const job = { model: pyModel, xTrain: Array.from(d.xTrain), yTrain: Array.from(d.yTrain), xTest: Array.from(d.xTest),
    nFeatures: d.nFeatures ?? d.F, task: d.task, nClasses: d.task === "regression" ? null : d.nClasses ?? d.C ?? null };
  const run = spawnSync(PYTHON, ["-c", TABICL_PREDICT], { cwd: ROOT, input: JSON.stringify(job), encoding: "utf8",
    timeout: 300000 });
  if (run.status !== 0) throw new Error(`the Python tabicl reference failed:\n${run.stderr}`);
  return Float64Array.from(JSON.parse(run.stdout));
}

export const REFERENCES = {
  knn: refDistanceModel,
  attention: refDistanceModel,
  icl_transformer: (model, d) => refTransformer(model.weights, d),
  tabular_fm: (model, d) => refTabularFM(model.weights, d),
  tabicl: refTabicl,
  // the other checkpoint models: arenalite.models.predict the same way (weights: a path)
  tabpfn: refTabicl,
  tabfm: refTabicl,
};
