// RMSNorm of `rows` rows of D floats: out = x / sqrt(mean(x^2) + eps) * g (g optional),
// as ops.py's rms_norm: the mean of squares summed d = 0 … D-1 in order, then divided.
// D may be a head dim (q/k norms: rows = tokens x heads, g of length D). Rows read from
// float xOff on (stride D), written from float outOff on (stride D). Entry "main" reads x
// and writes out (two buffers), or adds onto it (flags 2: the residual stream); "in_place"
// normalises `out` itself (xOff ignored). flags 1: g is read. One
// invocation per row, 64 a workgroup, folded into y past 65535 workgroups.
struct Params { rows: u32, D: u32, eps: f32, flags: u32, xOff: u32, outOff: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

fn weight(d: u32) -> f32 {
  if ((p.flags & 1u) != 0u) { return g[d]; }
  return 1.0;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * 65535u * 64u;
  if (row >= p.rows) { return; }
  let xb = p.xOff + row * p.D;
  let ob = p.outOff + row * p.D;
  var s = 0.0;
  for (var d = 0u; d < p.D; d++) { s += x[xb + d] * x[xb + d]; }
  let r = sqrt(s / f32(p.D) + p.eps);
  if ((p.flags & 2u) != 0u) {
    for (var d = 0u; d < p.D; d++) { out[ob + d] = out[ob + d] + x[xb + d] / r * weight(d); }
    return;
  }
  for (var d = 0u; d < p.D; d++) { out[ob + d] = x[xb + d] / r * weight(d); }
}

@compute @workgroup_size(64)
fn in_place(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * 65535u * 64u;
  if (row >= p.rows) { return; }
  let ob = p.outOff + row * p.D;
  var s = 0.0;
  for (var d = 0u; d < p.D; d++) { s += out[ob + d] * out[ob + d]; }
  let r = sqrt(s / f32(p.D) + p.eps);
  for (var d = 0u; d < p.D; d++) { out[ob + d] = out[ob + d] / r * weight(d); }
}
