// tabular_fm head on each query row's target token (the last of its T tokens):
// z = LN(h; head.ln), then softmax of the first C of z @ head.cls.w + head.cls.b
// (C > 0), or the standardized Gaussian (mu, softplus(s) + 0.001) from z @ head.reg.w +
// head.reg.b (C = 0). `pack` holds ln.g, ln.b, cls.w [D x maxC], cls.b, reg.w [D x 2],
// reg.b. One invocation per row; D at most 256.
struct Params { rows: u32, T: u32, D: u32, maxC: u32, C: u32, eps: f32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> h: array<f32>;
@group(0) @binding(2) var<storage, read> pack: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x;
  if (row >= p.rows) { return; }
  let D = p.D;
  let base = (row * p.T + p.T - 1u) * D;
  var mean = 0.0;
  for (var d = 0u; d < D; d++) { mean += h[base + d]; }
  mean = mean / f32(D);
  var variance = 0.0;
  for (var d = 0u; d < D; d++) {
    let c = h[base + d] - mean;
    variance += c * c;
  }
  let inv = 1.0 / sqrt(variance / f32(D) + p.eps);
  var z: array<f32, 256>;
  for (var d = 0u; d < D; d++) { z[d] = (h[base + d] - mean) * inv * pack[d] + pack[D + d]; }
  let cls_w = 2u * D;
  let cls_b = cls_w + D * p.maxC;
  let reg_w = cls_b + p.maxC;
  let reg_b = reg_w + 2u * D;
  if (p.C == 0u) {
    var mu = pack[reg_b];
    var s = pack[reg_b + 1u];
    for (var d = 0u; d < D; d++) {
      mu += z[d] * pack[reg_w + 2u * d];
      s += z[d] * pack[reg_w + 2u * d + 1u];
    }
    out[2u * row] = mu;
    out[2u * row + 1u] = max(s, 0.0) + log(1.0 + exp(-abs(s))) + 0.001;
    return;
  }
  var top = -3.0e38;
  for (var c = 0u; c < p.C; c++) {
    var logit = pack[cls_b + c];
    for (var d = 0u; d < D; d++) { logit += z[d] * pack[cls_w + d * p.maxC + c]; }
    out[row * p.C + c] = logit;
    top = max(top, logit);
  }
  var total = 0.0;
  for (var c = 0u; c < p.C; c++) {
    let e = exp(out[row * p.C + c] - top);
    out[row * p.C + c] = e;
    total += e;
  }
  for (var c = 0u; c < p.C; c++) { out[row * p.C + c] = out[row * p.C + c] / total; }
}
