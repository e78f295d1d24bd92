// Attention for head dims past attention.wgsl's 64 (Google TabFM v1.0.0's ICL blocks:
// 2048 wide over 8 heads, 256 a head), softmax at the scale `scale`, no query scaling:
//   out(b, t, h) = sum_i softmax_i(q(b, t, h) . k(b, i, h) * scale) v(b, i, h)
// for query t < Tq of batch b < batches, head h < H, keys i < keys; vectors dh floats
// (dh <= 256, the pipeline constant DH) at q: qOff + b * qBatch + t * qRow + h * dh (k and
// v: kOff + b * kBatch + i * kRow + h * dh, in two buffers; out: oOff, oBatch, oRow).
// A workgroup of 64 invocations, one per query row, covers 64 rows of one batch and head;
// keys and values go through workgroup memory `tile` keys at a time (tile · dh <= 2048
// floats each: 16 KiB in all), each invocation scoring one key at a time over d = 0 …
// dh-1 in order with an online softmax (running maximum, rescaled sums), as attention.wgsl.
// Dispatch: H * batches * ceil(Tq / 64) workgroups, folded into y past 65535.
struct Params { batches: u32, Tq: u32, keys: u32, H: u32, dh: u32, scale: f32, qOff: u32, qBatch: u32,
                qRow: u32, kOff: u32, kBatch: u32, kRow: u32, oOff: u32, oBatch: u32, oRow: u32, tile: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const MAX_DH = 256u;
override DH: u32 = 256u;
var<workgroup> tile_k: array<f32, 2048>;
var<workgroup> tile_v: array<f32, 2048>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wgid: vec3<u32>, @builtin(num_workgroups) wgs: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let rowBlocks = (p.Tq + 63u) / 64u;
  let wg = wgid.x + wgid.y * wgs.x;
  if (wg >= p.H * p.batches * rowBlocks) { return; }
  let h = wg % p.H;
  let b = (wg / p.H) % p.batches;
  let t = (wg / (p.H * p.batches)) * 64u + li;
  let valid = t < p.Tq;
  let dh = DH;
  var qv: array<f32, MAX_DH>;
  var acc: array<f32, MAX_DH>;
  let qb = p.qOff + b * p.qBatch + min(t, p.Tq - 1u) * p.qRow + h * dh;
  for (var d = 0u; d < dh; d++) {
    qv[d] = q[qb + d];
    acc[d] = 0.0;
  }
  var m = -3.0e38;
  var l = 0.0;
  let kb = p.kOff + b * p.kBatch + h * dh;
  for (var i0 = 0u; i0 < p.keys; i0 += p.tile) {
    let n = min(p.tile, p.keys - i0);
    for (var e = li; e < n * dh; e += 64u) {
      let at = kb + (i0 + e / dh) * p.kRow + e % dh;
      tile_k[e] = k[at];
      tile_v[e] = v[at];
    }
    workgroupBarrier();
    for (var key = 0u; key < n; key++) {
      let row = key * dh;
      var s = 0.0;
      for (var d = 0u; d < dh; d++) { s += qv[d] * tile_k[row + d]; }
      s = s * p.scale;
      if (s > m) {
        let r = exp(m - s);
        l = l * r;
        for (var d = 0u; d < dh; d++) { acc[d] = acc[d] * r; }
        m = s;
      }
      let w = exp(s - m);
      l += w;
      for (var d = 0u; d < dh; d++) { acc[d] += w * tile_v[row + d]; }
    }
    workgroupBarrier();
  }
  if (!valid) { return; }
  let ob = p.oOff + b * p.oBatch + t * p.oRow + h * dh;
  for (var d = 0u; d < dh; d++) { out[ob + d] = acc[d] / l; }
}
