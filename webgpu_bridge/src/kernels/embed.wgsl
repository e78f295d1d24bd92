// Label embedding of context rows, added onto h[n x D] after the row embedding.
// Classification (mode 0): h[i] += label_w[y_i]. Regression (mode 1): h[i] += y_i * label_reg,
// y already standardized with the context mean and population std.
struct Params { n: u32, D: u32, mode: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> label_w: array<f32>;
@group(0) @binding(3) var<storage, read> label_reg: array<f32>;
@group(0) @binding(4) var<storage, read_write> h: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let t = gid.x;
  if (t >= p.n * p.D) { return; }
  let i = t / p.D;
  let d = t % p.D;
  if (p.mode == 0u) {
    h[t] = h[t] + label_w[u32(y[i]) * p.D + d];
  } else {
    h[t] = h[t] + y[i] * label_reg[d];
  }
}
