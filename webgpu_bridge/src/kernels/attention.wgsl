// Multi-head softmax attention of R rows over the n CONTEXT rows only:
// out[r, h] = softmax_j(q[r, h] . k[j, h] * scale) v[j, h]. Keys and values are the
// per-layer context cache. One invocation per (row, head); online softmax (running
// max and rescaled sums) so that exp never overflows. Head dim at most 64.
struct Params { R: u32, n: u32, D: u32, H: u32, dh: u32, scale: f32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.x;
  if (t >= p.R * p.H) { return; }
  let row = t / p.H;
  let off = (t % p.H) * p.dh;
  let qb = row * p.D + off;
  var acc: array<f32, 64>;
  for (var d = 0u; d < p.dh; d++) { acc[d] = 0.0; }
  var m = -3.0e38;
  var l = 0.0;
  for (var j = 0u; j < p.n; j++) {
    let kb = j * p.D + off;
    var s = 0.0;
    for (var d = 0u; d < p.dh; d++) { s += q[qb + d] * k[kb + d]; }
    s = s * p.scale;
    if (s > m) {
      let r = exp(m - s);
      l = l * r;
      for (var d = 0u; d < p.dh; d++) { acc[d] = acc[d] * r; }
      m = s;
    }
    let w = exp(s - m);
    l += w;
    for (var d = 0u; d < p.dh; d++) { acc[d] += w * v[kb + d]; }
  }
  for (var d = 0u; d < p.dh; d++) { out[qb + d] = acc[d] / l; }
}
