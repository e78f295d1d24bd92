// TabPFN's strided copies (inducing vectors and CLS tokens broadcast, column embeddings into
// a row's tokens, the CLS tokens out of them): for a < outer, b < inner, w < width,
//   out[outOff + a * outS1 + b * outS2 + w] (+)= src[inOff + a * inS1 + b * inS2 + w]
// (a stride 0 broadcasts; accumulate 1 adds). One invocation per float, folded past 65535.
struct Params { outer: u32, inner: u32, width: u32, inS1: u32, inS2: u32, inOff: u32, outS1: u32, outS2: u32,
                outOff: u32, accumulate: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.outer * p.inner * p.width) { return; }
  let w = i % p.width;
  let b = (i / p.width) % p.inner;
  let a = i / (p.width * p.inner);
  let v = src[p.inOff + a * p.inS1 + b * p.inS2 + w];
  let at = p.outOff + a * p.outS1 + b * p.outS2 + w;
  out[at] = select(v, out[at] + v, p.accumulate == 1u);
}
