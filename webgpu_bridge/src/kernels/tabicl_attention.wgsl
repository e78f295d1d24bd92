// Multi-head cross-attention with separate batch strides for queries and keys/values, as
// TabICL's attentions need: inducing points over a column's context rows (queries shared by
// every column: qBatch 0), rows over a column's hidden points, tokens (or the CLS tokens
// alone) over a row's tokens, query rows over the context rows (one batch).
// Query t < Tq of batch b < batches, head h, reads
//   q[(b * qBatch + t) * qStride + qOff + h * dh + d]
// and attends to keys i < keys at rows b * kBatch + i of the key/value buffer (row stride
// kvStride; keys from float kOff, values from vOff on, in each row):
//   out[(b * Tq + t) * H * dh + h * dh + d] = sum_i softmax_i(q . k_i * scale) v_i[d].
// One invocation per (batch, query, head); online softmax (running maximum, rescaled
// sums); head dim at most 64.
struct Params { batches: u32, Tq: u32, keys: u32, H: u32, dh: u32, scale: f32, qBatch: u32,
                qStride: u32, qOff: u32, kBatch: u32, kvStride: u32, kOff: u32, vOff: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kv: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let inv = gid.x + gid.y * 65535u * 64u;
  if (inv >= p.batches * p.Tq * p.H) { return; }
  let h = inv % p.H;
  let bt = inv / p.H;
  let t = bt % p.Tq;
  let b = bt / p.Tq;
  let qb = (b * p.qBatch + t) * p.qStride + p.qOff + h * p.dh;
  var qv: array<f32, 64>;
  var acc: array<f32, 64>;
  for (var d = 0u; d < p.dh; d++) {
    qv[d] = q[qb + d];
    acc[d] = 0.0;
  }
  var m = -3.0e38;
  var l = 0.0;
  for (var i = 0u; i < p.keys; i++) {
    let row = (b * p.kBatch + i) * p.kvStride + h * p.dh;
    var s = 0.0;
    for (var d = 0u; d < p.dh; d++) { s += qv[d] * kv[row + p.kOff + d]; }
    s = s * p.scale;
    if (s > m) {
      let r = exp(m - s);
      l = l * r;
      for (var d = 0u; d < p.dh; d++) { acc[d] = acc[d] * r; }
      m = s;
    }
    let wgt = exp(s - m);
    l += wgt;
    for (var d = 0u; d < p.dh; d++) { acc[d] += wgt * kv[row + p.vOff + d]; }
  }
  let ob = bt * p.H * p.dh + h * p.dh;
  for (var d = 0u; d < p.dh; d++) { out[ob + d] = acc[d] / l; }
}
