// tabular_fm row attention: token i of every row (context or query) attends to token i of
// the n CONTEXT rows only, per head. q and out are [rows x T x D]; k and v are the layer's
// context cache [n x T x D]. One invocation per (row, token, head); online softmax.
struct Params { rows: u32, n: u32, T: u32, D: u32, H: u32, dh: u32, scale: f32, pad0: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.x + gid.y * 65535u * 64u;
  if (t >= p.rows * p.T * p.H) { return; }
  let token = t / p.H;
  let column = token % p.T;
  let off = (t % p.H) * p.dh;
  let qb = token * p.D + off;
  var acc: array<f32, 64>;
  for (var d = 0u; d < p.dh; d++) { acc[d] = 0.0; }
  var m = -3.0e38;
  var l = 0.0;
  for (var j = 0u; j < p.n; j++) {
    let kb = (j * p.T + column) * p.D + off;
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
