// out[M x N] (= or +=) a[M x K] @ w[K x N] + bias[N]. Row-major f32.
// accumulate = 1 adds onto out (the residual stream), 0 overwrites it.
// Tiled (MATMUL_TILE in kernels.js): an 8 x 8 workgroup computes a 32 x 32 block of out,
// each thread 4 rows (local.y + 0, 8, 16, 24) x 4 adjacent columns held in vec4
// accumulators. K is walked in 32-wide slices: the workgroup first copies the slice of a
// (32 rows x 32) and of w (32 x 32 columns) into workgroup memory, 16 + 16 values per
// thread, so a value is read from storage once per workgroup instead of once per output;
// out-of-range rows, columns and k are zero padding. Each output sums k = 0 … K−1 in
// order, as the one-thread-per-output loop it replaces did.
struct Params { M: u32, K: u32, N: u32, accumulate: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BLOCK = 32u;
const SLICE = 32u;
var<workgroup> tile_a: array<f32, 1024>;        // [row in block][k in slice], 32 x 32
var<workgroup> tile_w: array<vec4<f32>, 256>;   // [k in slice][4 cols], 32 x 8 vec4

fn load_a(row: u32, k: u32) -> f32 {
  if (row < p.M && k < p.K) { return a[row * p.K + k]; }
  return 0.0;
}

fn load_w(k: u32, col: u32) -> f32 {
  if (k < p.K && col < p.N) { return w[k * p.N + col]; }
  return 0.0;
}

fn store(row: u32, col: u32, v: f32) {
  if (row >= p.M || col >= p.N) { return; }
  let o = row * p.N + col;
  let x = v + bias[col];
  if (p.accumulate == 1u) { out[o] = out[o] + x; } else { out[o] = x; }
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
    for (var t = 0u; t < 4u; t++) {
      let e = li + 64u * t;
      let k = k0 + e / 8u;
      let c = col0 + 4u * (e % 8u);
      tile_w[e] = vec4<f32>(load_w(k, c), load_w(k, c + 1u), load_w(k, c + 2u), load_w(k, c + 3u));
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
