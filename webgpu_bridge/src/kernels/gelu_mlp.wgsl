// Hidden layer of the MLP: out[M x N] = GELU(a[M x K] @ w[K x N] + bias[N]),
// GELU in the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct Params { M: u32, K: u32, N: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

// tanh written with exp so that large |u| saturates to +-1 instead of overflowing.
fn stable_tanh(u: f32) -> f32 {
  let e = exp(-2.0 * abs(u));
  return sign(u) * (1.0 - e) / (1.0 + e);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  let row = gid.y;
  if (row >= p.M || col >= p.N) { return; }
  var x = 0.0;
  for (var k = 0u; k < p.K; k++) {
    x += a[row * p.K + k] * w[k * p.N + col];
  }
  x += bias[col];
  let c = 0.7978845608028654; // sqrt(2 / pi)
  out[row * p.N + col] = 0.5 * x * (1.0 + stable_tanh(c * (x + 0.044715 * x * x * x)));
}
