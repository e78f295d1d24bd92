// The LayerNorm of every model, over the D values of each of `rows` rows, with or without
// bias (TabICL's bias_free_ln): out = (x - mean) / sqrt(var + eps) * g (+ b), population
// variance in a second pass (no E[x^2] - mean^2). Rows read from float xOff on (stride D)
// and written from float outOff on (stride D): a chunk of rows of a bigger residual stream.
// One invocation per row, 64 a workgroup, folded into y past 65535 workgroups.
struct Params { rows: u32, D: u32, eps: f32, hasBias: u32, xOff: u32, outOff: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * 65535u * 64u;
  if (row >= p.rows) { return; }
  let xb = p.xOff + row * p.D;
  let ob = p.outOff + row * p.D;
  var mean = 0.0;
  for (var d = 0u; d < p.D; d++) { mean += x[xb + d]; }
  mean = mean / f32(p.D);
  var variance = 0.0;
  for (var d = 0u; d < p.D; d++) {
    let c = x[xb + d] - mean;
    variance += c * c;
  }
  let inv = 1.0 / sqrt(variance / f32(p.D) + p.eps);
  for (var d = 0u; d < p.D; d++) {
    var v = (x[xb + d] - mean) * inv * g[d];
    if (p.hasBias == 1u) { v += b[d]; }
    out[ob + d] = v;
  }
}
