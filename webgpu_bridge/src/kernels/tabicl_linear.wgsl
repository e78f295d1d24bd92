// TabICL's linear layer (torch's F.linear): out[r, c] (= or +=) act(sum_k a[r, k] w[c, k] + bias[c])
// for r < M, c < N, with w in torch's layout (N rows of K) read from float wOff on (so one
// stored in_proj_weight serves the query part and the key/value part), a read from row
// stride aStride and float aOff on, out written at row stride outStride from float outOff
// (a chunk of rows in a bigger buffer, or the key/value half of a row). flags: 1 bias
// (bias[bOff + c]), 2 exact GELU on the result, 4 accumulate (the residual stream).
// Tiled as kernels/matmul.wgsl: an 8 x 8 workgroup computes a 32 x 32 block of out, K in
// 32-wide slices through workgroup memory (w's slice loaded along k, its contiguous axis),
// each output summing k = 0 ... K-1 in order.
struct Params { M: u32, K: u32, N: u32, flags: u32, aStride: u32, aOff: u32, wOff: u32, bOff: u32,
                outStride: u32, outOff: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BLOCK = 32u;
const SLICE = 32u;
var<workgroup> tile_a: array<f32, 1024>;
var<workgroup> tile_w: array<vec4<f32>, 256>;

fn load_a(row: u32, k: u32) -> f32 {
  if (row < p.M && k < p.K) { return a[p.aOff + row * p.aStride + k]; }
  return 0.0;
}

fn load_w(k: u32, col: u32) -> f32 {
  if (k < p.K && col < p.N) { return w[p.wOff + col * p.K + k]; }
  return 0.0;
}

fn store(row: u32, col: u32, v: f32) {
  if (row >= p.M || col >= p.N) { return; }
  let o = p.outOff + row * p.outStride + col;
  var x = v;
  if ((p.flags & 1u) != 0u) { x += bias[p.bOff + col]; }
  if ((p.flags & 2u) != 0u) { x = gelu_exact(x); }
  if ((p.flags & 4u) != 0u) { out[o] = out[o] + x; } else { out[o] = x; }
}

fn store_row(row: u32, col: u32, v: vec4<f32>) {
  store(row, col, v.x);
  store(row, col + 1u, v.y);
  store(row, col + 2u, v.z);
  store(row, col + 3u, v.w);
}

@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let row0 = group.y * BLOCK;
  let col0 = group.x * BLOCK;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  let slices = (p.K + SLICE - 1u) / SLICE;
  for (var s = 0u; s < slices; s++) {
    let k0 = s * SLICE;
    for (var t = 0u; t < 16u; t++) {
      let e = li + 64u * t;
      tile_a[e] = load_a(row0 + e / SLICE, k0 + e % SLICE);
    }
    // w's rows (output columns) are contiguous in k: neighbouring threads read neighbouring k
    for (var t = 0u; t < 16u; t++) {
      let e = li + 64u * t;
      let k = e % SLICE;
      let c = e / SLICE;
      tile_w[k * 8u + c / 4u][c % 4u] = load_w(k0 + k, col0 + c);
    }
    workgroupBarrier();
    for (var k = 0u; k < SLICE; k++) {
      let wk = tile_w[k * 8u + local.x];
      acc0 += tile_a[local.y * SLICE + k] * wk;
      acc1 += tile_a[(local.y + 8u) * SLICE + k] * wk;
      acc2 += tile_a[(local.y + 16u) * SLICE + k] * wk;
      acc3 += tile_a[(local.y + 24u) * SLICE + k] * wk;
    }
    workgroupBarrier();
  }
  let col = col0 + 4u * local.x;
  store_row(row0 + local.y, col, acc0);
  store_row(row0 + local.y + 8u, col, acc1);
  store_row(row0 + local.y + 16u, col, acc2);
  store_row(row0 + local.y + 24u, col, acc3);
}
