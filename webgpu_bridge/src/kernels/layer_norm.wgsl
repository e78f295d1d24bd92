// Row-wise LayerNorm: out = (x - mean) / sqrt(var + eps) * g + b over the D features
// of each row; population variance computed in a second pass (no E[x^2] - mean^2).
struct Params { rows: u32, D: u32, eps: f32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x;
  if (row >= p.rows) { return; }
  let base = row * p.D;
  var mean = 0.0;
  for (var d = 0u; d < p.D; d++) { mean += x[base + d]; }
  mean = mean / f32(p.D);
  var variance = 0.0;
  for (var d = 0u; d < p.D; d++) {
    let c = x[base + d] - mean;
    variance += c * c;
  }
  variance = variance / f32(p.D);
  let inv = 1.0 / sqrt(variance + p.eps);
  for (var d = 0u; d < p.D; d++) {
    out[base + d] = (x[base + d] - mean) * inv * g[d] + b[d];
  }
}
