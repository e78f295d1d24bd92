// SwiGLU of a feed-forward's two input projections: out[r, c] = silu(gate[r, c]) * up[r, c]
// for r < rows, c < N, silu(v) = v / (1 + exp(-v)) (ops.py / tabfm layers.py's swiglu; exp
// to about 1 ulp, math.wgsl, its argument kept within [-87, 80] where ldexp is defined: past
// it silu is v or -0 to float32 anyway). gate and up at (off, row stride) in floats, so both may be
// halves of one [rows x 2N] product (one buffer bound twice); out at (outOff, outStride).
struct Params { rows: u32, N: u32, gateOff: u32, gateStride: u32, upOff: u32, upStride: u32,
                outOff: u32, outStride: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.rows * p.N) { return; }
  let r = i / p.N;
  let c = i % p.N;
  let v = gate[p.gateOff + r * p.gateStride + c];
  out[p.outOff + r * p.outStride + c] = v / (1.0 + exp_accurate(clamp(-v, -87.0, 80.0))) * up[p.upOff + r * p.upStride + c];
}
