// Multi-head softmax attention with a strided key walk; every attention of the bridge is one.
// Query token t (of `queries`), head h, attends to the `keys` tokens
//   j_i = first(t) + i * stride,  first(t) = (t / block) * block + t % column  (block 0: none),
// out[t, h] = Σ_i softmax_i(q[t, h] · k[j_i, h] · scale) v[j_i, h]; rows of q, k, v and out
// are D = H * dh floats.
//   icl_transformer, every row over the n context rows:  block 0, column 1, stride 1.
//   tabular_fm feature attention, within a row of T:     block T, column 1, stride 1, keys T.
//   tabular_fm row attention, token column over context: block 0, column T, stride T, keys n.
// One invocation per (token, head); online softmax (running max and rescaled sums) so exp
// never overflows. Head dim at most 64.
struct Params { queries: u32, keys: u32, H: u32, dh: u32, scale: f32, block: u32, column: u32,
                stride: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.x + gid.y * 65535u * 64u;
  if (t >= p.queries * p.H) { return; }
  let token = t / p.H;
  let D = p.H * p.dh;
  let off = (t % p.H) * p.dh;
  let qb = token * D + off;
  let first = select(0u, (token / max(p.block, 1u)) * p.block, p.block > 0u) + token % p.column;
  var acc: array<f32, 64>;
  for (var d = 0u; d < p.dh; d++) { acc[d] = 0.0; }
  var m = -3.0e38;
  var l = 0.0;
  for (var i = 0u; i < p.keys; i++) {
    let kb = (first + i * p.stride) * D + off;
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
