// The ICL stage's target embedding onto the context rows' representations h[rows x D]:
// mode 1 (classes) h[t, e] += yw[e * maxC + y[t]] + yb[e], mode 2 (regression)
// h[t, e] += y[t] * yw[e] + yb[e] (y_encoder: weight D x maxC, or D x 1).
struct Params { rows: u32, D: u32, mode: u32, maxC: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> yw: array<f32>;
@group(0) @binding(3) var<storage, read> yb: array<f32>;
@group(0) @binding(4) var<storage, read_write> h: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x + gid.y * 65535u * 64u;
  if (idx >= p.rows * p.D) { return; }
  let e = idx % p.D;
  let t = idx / p.D;
  if (p.mode == 1u) {
    h[idx] = h[idx] + (yw[e * p.maxC + u32(y[t])] + yb[e]);
  } else {
    h[idx] = h[idx] + (y[t] * yw[e] + yb[e]);
  }
}
