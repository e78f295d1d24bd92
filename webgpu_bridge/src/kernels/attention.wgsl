// The multi-head attention of every model, tiled, with TabICL's SSMax / QASSMax query
// scaling fused into the query load.
//
// Query t < Tq of batch b < batches, head h < H, attends to keys i < keys of its batch:
//   out(b, t, h) = sum_i softmax_i(q'(b, t, h) . k(b, i, h) * scale) v(b, i, h),
// every vector dh floats (dh <= 64) at a strided address (floats):
//   q(b, t, h)   = qOff + b * qBatch + t * qRow + h * dh        (out: oOff, oBatch, oRow)
//   k(b, i, h)   = kOff + b * kBatch + i * kRow + g * dh
//   v(b, i, h)   = vOff + b * vBatch + i * vRow + g * vHead
// with g = h / (H / kvHeads) the KV head query head h reads (grouped keys and values, as
// torch's repeat_interleave: TabPFN v3's ICL; kvHeads = H without groups); vBatch / vRow /
// vHead are kBatch / kRow / dh unless a model's values lie elsewhere (TabPFN's decoder:
// one-hot targets shared by every head, vBatch = vHead = 0),
// so one kernel serves icl_transformer (one batch: every row over the context rows),
// tabular_fm (within a row of T tokens: batch = row; a token column over the context:
// batch = column, row stride T tokens) and TabICL (inducing points over a column's rows,
// rows over inducing points, a row's tokens, query rows over the context; keys and values
// in one buffer bound twice).
//
// SSMax (ssmax 1, 2): q' = q * (base * mod), base = base[h * dh + d] (elementwise) or
// base[h]; with the query MLP (ssmax 2, QASSMax) mod = 1 + tanh(W2 GELU(W0 q + b0) + b2)
// on the unscaled query (W0: hidden x dh, W2: qOut x hidden, qOut dh or 1; packed in `mlp`
// as W0 | b0 | W2 | b2), else mod = 1; each sum in order, as layers.py's ssmax_scale.
//
// Shape: a workgroup of 64 invocations, one per query row, covers one head of `group`
// batches × `rows` query rows of each (group · rows <= 64: 64 rows of one batch when Tq is
// large; several batches when Tq is small, e.g. a row's tokens, so no invocation idles).
// The keys and values of its batches go through workgroup memory in tiles of `tile` keys
// (group · tile · dh <= 1024 floats each), loaded once by all 64 invocations and read by
// all the rows of their batch; each invocation keeps its query and output in registers,
// scores one key at a time over d = 0 … dh-1 in order, with an online softmax (running
// maximum, rescaled sums), so exp never overflows and no score array is kept.
// Workgroup memory: 8 KiB. The head dim is the pipeline constant DH (p.dh the same). Dispatch: H * ceil(batches / group) * ceil(Tq / rows)
// workgroups, folded into y past 65535 (operators.js picks group, rows and tile).
struct Params { batches: u32, Tq: u32, keys: u32, H: u32, dh: u32, scale: f32,
                qOff: u32, qBatch: u32, qRow: u32, kOff: u32, vOff: u32, kBatch: u32, kRow: u32,
                oOff: u32, oBatch: u32, oRow: u32,
                ssmax: u32, elementwise: u32, hidden: u32, qOut: u32,
                group: u32, rows: u32, tile: u32, kvHeads: u32, vBatch: u32, vRow: u32, vHead: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> base: array<f32>;
@group(0) @binding(6) var<storage, read> mlp: array<f32>;

const MAX_DH = 64u;
// The head dim, fixed per pipeline (operators.js compiles one per dh a model has), so the
// loops over d have a constant trip count: unrolled, the query and output in registers.
override DH: u32 = 64u;
const MAX_HIDDEN = 64u;
var<workgroup> tile_k: array<f32, 1024>;   // [batch in group][key in tile][d]
var<workgroup> tile_v: array<f32, 1024>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wgid: vec3<u32>, @builtin(num_workgroups) wgs: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let rowBlocks = (p.Tq + p.rows - 1u) / p.rows;
  let batchGroups = (p.batches + p.group - 1u) / p.group;
  let wg = wgid.x + wgid.y * wgs.x;
  if (wg >= p.H * batchGroups * rowBlocks) { return; }
  let h = wg % p.H;
  let g = h / (p.H / p.kvHeads);  // the KV head of query head h
  let b0 = ((wg / p.H) % batchGroups) * p.group;
  let t = (wg / (p.H * batchGroups)) * p.rows + li % p.rows;
  let gb = li / p.rows;           // this invocation's batch within the group
  let b = b0 + gb;
  let valid = gb < p.group && b < p.batches && t < p.Tq;
  let dh = DH;

  var qv: array<f32, MAX_DH>;
  var acc: array<f32, MAX_DH>;
  let qb = p.qOff + b * p.qBatch + t * p.qRow + h * dh;
  for (var d = 0u; d < dh; d++) {
    qv[d] = select(0.0, q[qb + d], valid);
    acc[d] = 0.0;
  }
  if (p.ssmax != 0u && valid) {
    var mods: array<f32, MAX_DH>;
    for (var d = 0u; d < dh; d++) { mods[d] = 1.0; }
    if (p.ssmax == 2u) {
      var hid: array<f32, MAX_HIDDEN>;
      for (var j = 0u; j < p.hidden; j++) {
        var s = 0.0;
        for (var d = 0u; d < dh; d++) { s += qv[d] * mlp[j * dh + d]; }
        hid[j] = gelu_exact(s + mlp[p.hidden * dh + j]);
      }
      let w2 = p.hidden * dh + p.hidden;
      for (var o = 0u; o < p.qOut; o++) {
        var s = 0.0;
        for (var j = 0u; j < p.hidden; j++) { s += hid[j] * mlp[w2 + o * p.hidden + j]; }
        mods[o] = tanh_stable(s + mlp[w2 + p.qOut * p.hidden + o]) + 1.0;
      }
    }
    for (var d = 0u; d < dh; d++) {
      let bv = select(base[h], base[h * dh + d], p.elementwise == 1u);
      let mv = select(mods[0], mods[d], p.qOut > 1u);
      qv[d] = qv[d] * (bv * mv);
    }
  }

  var m = -3.0e38;
  var l = 0.0;
  let perBatch = p.tile * dh;
  for (var i0 = 0u; i0 < p.keys; i0 += p.tile) {
    let n = min(p.tile, p.keys - i0);
    // dh invocations copy a key row (neighbours read neighbouring floats), 64 / dh rows at a time
    if (li < (64u / dh) * dh) {
      let d = li % dh;
      for (var r = li / dh; r < p.group * p.tile; r += 64u / dh) {
        let eb = b0 + r / p.tile;
        let key = r % p.tile;
        let inside = key < n && eb < p.batches;
        let cb = min(eb, p.batches - 1u);
        let ck = i0 + min(key, n - 1u);
        let at = cb * p.kBatch + ck * p.kRow + g * dh + d;
        let vat = cb * p.vBatch + ck * p.vRow + g * p.vHead + d;
        tile_k[r * dh + d] = select(0.0, k[p.kOff + at], inside);
        tile_v[r * dh + d] = select(0.0, v[p.vOff + vat], inside);
      }
    }
    workgroupBarrier();
    let kb = min(gb, p.group - 1u) * perBatch;
    for (var key = 0u; key < n; key++) {
      let row = kb + key * dh;
      var s = 0.0;
      for (var d = 0u; d < dh; d++) { s += qv[d] * tile_k[row + d]; }
      s = s * p.scale;
      if (s > m) {
        let r = exp(m - s);
        l = l * r;
        for (var d = 0u; d < dh; d++) { acc[d] = acc[d] * r; }
        m = s;
      }
      let wgt = exp(s - m);
      l += wgt;
      for (var d = 0u; d < dh; d++) { acc[d] += wgt * tile_v[row + d]; }
    }
    workgroupBarrier();
  }
  if (!valid) { return; }
  let ob = p.oOff + b * p.oBatch + t * p.oRow + h * dh;
  for (var d = 0u; d < dh; d++) { out[ob + d] = acc[d] / l; }
}
