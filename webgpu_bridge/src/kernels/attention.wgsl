// The multi-head attention of every model, tiled for a GPU, with TabICL's SSMax / QASSMax
// query scaling fused into the query load.
//
// Query t < Tq of batch b < batches, head h < H, attends to keys i < keys of its batch:
//   out(b, t, h) = sum_i softmax_i(q'(b, t, h) . k(b, i, h) * scale) v(b, i, h),
// every vector dh floats (dh <= 64) at a strided address (floats):
//   q(b, t, h)   = qOff + b * qBatch + t * qRow + h * dh        (out: oOff, oBatch, oRow)
//   k(b, i, h)   = kOff + b * kBatch + i * kRow + h * dh        (v: vOff, same strides)
// so one kernel serves icl_transformer (one batch: every row over the context rows),
// tabular_fm (within a row of T tokens: batch = row; a token column over the context:
// batch = column, row stride T tokens) and TabICL (inducing points over a column's rows,
// rows over inducing points, a row's tokens, query rows over the context; keys and values
// in one buffer bound twice).
//
// SSMax (ssmax 1, 2): q' = q * (base * mod), base = base[h * dh + d] (elementwise) or
// base[h]; with the query MLP (ssmax 2, QASSMax) mod = 1 + tanh(W2 GELU(W0 q + b0) + b2)
// per query and head, on the unscaled query (W0: hidden x dh, W2: qOut x hidden, qOut dh or
// 1; packed in `mlp` as W0 | b0 | W2 | b2), else mod = 1. Arithmetic as layers.py's
// ssmax_scale: each hidden unit and output sums in order.
//
// Shape: one workgroup of 64 invocations per (batch, head, block of 16 query rows), four
// invocations (lanes) per query row, lane j holding dims j, j + 4, ... of the query and of
// its output. Keys and values go through workgroup memory in tiles of 16 keys (loaded once
// per workgroup, read by its 16 rows); each lane's partial dot products meet in workgroup
// memory and every lane of a row sums the four in the same order, so the row's lanes agree
// on its scores; online softmax per tile (running maximum, rescaled sums), so exp never
// overflows and the keys are never all held at once. Workgroup memory: 12 KiB (keys,
// values, partial scores; the prologue's query and hidden vectors reuse the first two).
// Dispatch: batches * H * ceil(Tq / 16) workgroups, folded into y past 65535.
struct Params { batches: u32, Tq: u32, keys: u32, H: u32, dh: u32, scale: f32,
                qOff: u32, qBatch: u32, qRow: u32, kOff: u32, vOff: u32, kBatch: u32, kRow: u32,
                oOff: u32, oBatch: u32, oRow: u32,
                ssmax: u32, elementwise: u32, hidden: u32, qOut: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> base: array<f32>;
@group(0) @binding(6) var<storage, read> mlp: array<f32>;

const ROWS = 16u;      // query rows per workgroup
const LANES = 4u;      // invocations per query row
const TILE = 16u;      // keys per tile
const MAX_DH = 64u;
const PER_LANE = 16u;  // MAX_DH / LANES
var<workgroup> tile_k: array<f32, 1024>;   // TILE x MAX_DH (prologue: the rows' queries)
var<workgroup> tile_v: array<f32, 1024>;   // TILE x MAX_DH (prologue: the rows' hidden units)
var<workgroup> partial: array<f32, 1024>;  // ROWS x TILE x LANES

// The QASSMax modulation of output `o` from the row's hidden units in tile_v.
fn modulation(slot: u32, o: u32) -> f32 {
  let w2 = p.hidden * p.dh + p.hidden;
  let b2 = w2 + p.qOut * p.hidden;
  var s = 0.0;
  for (var j = 0u; j < p.hidden; j++) { s += tile_v[slot * MAX_DH + j] * mlp[w2 + o * p.hidden + j]; }
  return tanh_stable(s + mlp[b2 + o]) + 1.0;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let blocks = (p.Tq + ROWS - 1u) / ROWS;
  let wg = group.x + group.y * groups.x;
  if (wg >= p.batches * p.H * blocks) { return; }
  let h = (wg / blocks) % p.H;
  let b = wg / (blocks * p.H);
  let slot = li / LANES;
  let lane = li % LANES;
  let t = (wg % blocks) * ROWS + slot;
  let valid = t < p.Tq;
  let qb = p.qOff + b * p.qBatch + t * p.qRow + h * p.dh;
  let dims = (p.dh + LANES - 1u - lane) / LANES;  // this lane's dims: lane, lane + 4, ...

  var qv: array<f32, PER_LANE>;
  var acc: array<f32, PER_LANE>;
  for (var j = 0u; j < dims; j++) {
    qv[j] = select(0.0, q[qb + lane + LANES * j], valid);
    acc[j] = 0.0;
  }
  if (p.ssmax == 2u) {
    for (var j = 0u; j < dims; j++) { tile_k[slot * MAX_DH + lane + LANES * j] = qv[j]; }
    workgroupBarrier();
    for (var u = lane; u < p.hidden; u += LANES) {
      var s = 0.0;
      for (var d = 0u; d < p.dh; d++) { s += tile_k[slot * MAX_DH + d] * mlp[u * p.dh + d]; }
      tile_v[slot * MAX_DH + u] = gelu_exact(s + mlp[p.hidden * p.dh + u]);
    }
    workgroupBarrier();
  }
  if (p.ssmax != 0u) {
    var perHead = 1.0;
    if (p.ssmax == 2u && p.qOut == 1u) { perHead = modulation(slot, 0u); }
    for (var j = 0u; j < dims; j++) {
      let d = lane + LANES * j;
      let bv = select(base[h], base[h * p.dh + d], p.elementwise == 1u);
      var mv = perHead;
      if (p.ssmax == 2u && p.qOut > 1u) { mv = modulation(slot, d); }
      qv[j] = qv[j] * (bv * mv);
    }
    workgroupBarrier();
  }

  var m = -3.0e38;
  var l = 0.0;
  let kb = p.kOff + b * p.kBatch + h * p.dh;
  let vb = p.vOff + b * p.kBatch + h * p.dh;
  for (var i0 = 0u; i0 < p.keys; i0 += TILE) {
    let n = min(TILE, p.keys - i0);
    for (var e = li; e < TILE * p.dh; e += 64u) {
      let key = e / p.dh;
      let d = e % p.dh;
      let inside = key < n;
      let row = (i0 + min(key, n - 1u)) * p.kRow + d;
      tile_k[key * MAX_DH + d] = select(0.0, k[kb + row], inside);
      tile_v[key * MAX_DH + d] = select(0.0, v[vb + row], inside);
    }
    workgroupBarrier();
    for (var key = 0u; key < n; key++) {
      var s = 0.0;
      for (var j = 0u; j < dims; j++) { s += qv[j] * tile_k[key * MAX_DH + lane + LANES * j]; }
      partial[(slot * TILE + key) * LANES + lane] = s;
    }
    workgroupBarrier();
    var scores: array<f32, TILE>;
    var top = m;
    for (var key = 0u; key < n; key++) {
      let at = (slot * TILE + key) * LANES;
      scores[key] = (((partial[at] + partial[at + 1u]) + partial[at + 2u]) + partial[at + 3u]) * p.scale;
      top = max(top, scores[key]);
    }
    if (top > m) {
      let r = exp(m - top);
      l = l * r;
      for (var j = 0u; j < dims; j++) { acc[j] = acc[j] * r; }
      m = top;
    }
    for (var key = 0u; key < n; key++) {
      let wgt = exp(scores[key] - m);
      l += wgt;
      for (var j = 0u; j < dims; j++) { acc[j] += wgt * tile_v[key * MAX_DH + lane + LANES * j]; }
    }
    workgroupBarrier();
  }
  if (!valid) { return; }
  let ob = p.oOff + b * p.oBatch + t * p.oRow + h * p.dh;
  for (var j = 0u; j < dims; j++) { out[ob + lane + LANES * j] = acc[j] / l; }
}
