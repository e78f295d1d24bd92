// SSMax-family query scaling (tabicl._model.ssmax), in place on projected queries:
//   q[r, h, d] *= base[h, d] * (1 + tanh(query_mlp(q[r, h, :]))[d])      (QASSMax)
// base = base_mlp(log n) (computed before by tabicl_linear on the one value log n, or the
// plain SSMax scales * log n), n the number of keys; query_mlp = Linear(dh -> hidden),
// exact GELU, Linear(hidden -> qOut) per head on the unscaled query. elementwise: base has
// H * dh values (else H: one per head); qOut is dh or 1 (one modulation per head);
// hasQuery 0 leaves out the modulation (ssmax, ssmax-mlp*). Query rows at stride `stride`
// from float `off`. One invocation per (row, head); dh <= 64, hidden <= 256.
struct Params { rows: u32, H: u32, dh: u32, stride: u32, off: u32, hidden: u32, qOut: u32,
                elementwise: u32, hasQuery: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> q: array<f32>;
@group(0) @binding(2) var<storage, read> base: array<f32>;
@group(0) @binding(3) var<storage, read> w0: array<f32>;
@group(0) @binding(4) var<storage, read> b0: array<f32>;
@group(0) @binding(5) var<storage, read> w2: array<f32>;
@group(0) @binding(6) var<storage, read> b2: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let inv = gid.x + gid.y * 65535u * 64u;
  if (inv >= p.rows * p.H) { return; }
  let h = inv % p.H;
  let r = inv / p.H;
  let qb = r * p.stride + p.off + h * p.dh;
  var x: array<f32, 64>;
  var mod_: array<f32, 64>;
  for (var d = 0u; d < p.dh; d++) {
    x[d] = q[qb + d];
    mod_[d] = 1.0;
  }
  if (p.hasQuery == 1u) {
    var hid: array<f32, 256>;
    for (var j = 0u; j < p.hidden; j++) {
      var s = 0.0;
      for (var d = 0u; d < p.dh; d++) { s += x[d] * w0[j * p.dh + d]; }
      hid[j] = gelu_exact(s + b0[j]);
    }
    for (var o = 0u; o < p.qOut; o++) {
      var s = 0.0;
      for (var j = 0u; j < p.hidden; j++) { s += hid[j] * w2[o * p.hidden + j]; }
      mod_[o] = tanh_stable(s + b2[o]) + 1.0;
    }
  }
  for (var d = 0u; d < p.dh; d++) {
    let bv = select(base[h], base[h * p.dh + d], p.elementwise == 1u);
    let mv = select(mod_[0], mod_[d], p.qOut > 1u);
    q[qb + d] = x[d] * (bv * mv);
  }
}
