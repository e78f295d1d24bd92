// out[M x N] (= or +=) a[M x K] @ w[K x N] + bias[N]. Row-major f32.
// accumulate = 1 adds onto out (the residual stream), 0 overwrites it.
struct Params { M: u32, K: u32, N: u32, accumulate: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = gid.x;
  let row = gid.y;
  if (row >= p.M || col >= p.N) { return; }
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    acc += a[row * p.K + k] * w[k * p.N + col];
  }
  acc += bias[col];
  let i = row * p.N + col;
  if (p.accumulate == 1u) { out[i] = out[i] + acc; } else { out[i] = acc; }
}
