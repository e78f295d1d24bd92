// Strided copy of `outer` x `inner` runs of `width` floats, every model's (operators.js's
// `copy`):
//   out[outOff + i * outS1 + j * outS2 + e] (= or +=) alpha * src[inOff + i * inS1 + j * inS2 + e]
// Broadcasts (a stride 0: the inducing points to every column, the CLS tokens to every
// row), a column stage's (column, row) output into a row stage's (row, token) layout
// (TabICL: accumulate with alpha = 1 / passes averages the mixed-radix passes), and the
// CLS tokens out of a row's tokens.
struct Params { outer: u32, inner: u32, width: u32, inS1: u32, inS2: u32, inOff: u32, outS1: u32,
                outS2: u32, outOff: u32, accumulate: u32, alpha: f32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x + gid.y * 65535u * 64u;
  if (idx >= p.outer * p.inner * p.width) { return; }
  let e = idx % p.width;
  let j = (idx / p.width) % p.inner;
  let i = idx / (p.width * p.inner);
  let o = p.outOff + i * p.outS1 + j * p.outS2 + e;
  let v = p.alpha * src[p.inOff + i * p.inS1 + j * p.inS2 + e];
  if (p.accumulate == 1u) { out[o] = out[o] + v; } else { out[o] = v; }
}
