// The linear layer of every model: out[r, c] (= or +=) act(sum_k a[r, k] w(k, c) + bias[c])
// for r < M, c < N. Rows of a are read at stride aStride from float aOff on, rows of out
// written at stride outStride from float outOff on (a chunk of rows of a bigger buffer, or
// the key/value half of a row). The weight's layout is a flag: torch's (N rows of K, w(k, c)
// = w[wOff + c * K + k], so one stored in_proj_weight serves the query part and the
// key/value part) or input-major (K rows of N, w(k, c) = w[wOff + k * N + c]: icl_transformer
// and tabular_fm). flags: 1 bias (bias[bOff + c]), 2 exact GELU, 8 tanh GELU, 4 accumulate
// onto out (the residual stream), 16 input-major weights.
// Tiled: an 8 x 8 workgroup computes a 32 x 32 block of out, each invocation 4 rows (local.y
// + 0, 8, 16, 24) x 4 adjacent columns in vec4 accumulators; K is walked in 32-wide slices
// copied into workgroup memory (16 + 16 values per invocation, each read along the
// weight's contiguous axis), so a value is read from storage once per workgroup instead of
// once per output. Each output sums k = 0 ... K-1 in order; out-of-range rows, columns and
// k are zero padding. Dispatch: ceil(N / 32) x ceil(M / 32) workgroups.
struct Params { M: u32, K: u32, N: u32, flags: u32, aStride: u32, aOff: u32, wOff: u32, bOff: u32,
                outStride: u32, outOff: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

const BLOCK = 32u;       // rows of out per workgroup
const COLS = 64u;        // columns of out per workgroup
const SLICE = 32u;
const BIAS = 1u;
const GELU_EXACT = 2u;
const ACCUMULATE = 4u;
const GELU_TANH = 8u;
const INPUT_MAJOR = 16u;
var<workgroup> tile_a: array<f32, 1024>;        // [row in block][k in slice], 32 x 32
var<workgroup> tile_w: array<vec4<f32>, 512>;   // [k in slice][4 columns], 32 x 16 vec4

fn load_a(row: u32, k: u32) -> f32 {
  if (row < p.M && k < p.K) { return a[p.aOff + row * p.aStride + k]; }
  return 0.0;
}

fn load_w(k: u32, col: u32) -> f32 {
  if (k >= p.K || col >= p.N) { return 0.0; }
  if ((p.flags & INPUT_MAJOR) != 0u) { return w[p.wOff + k * p.N + col]; }
  return w[p.wOff + col * p.K + k];
}

fn store(row: u32, col: u32, v: f32) {
  if (row >= p.M || col >= p.N) { return; }
  let o = p.outOff + row * p.outStride + col;
  var x = v;
  if ((p.flags & BIAS) != 0u) { x += bias[p.bOff + col]; }
  if ((p.flags & GELU_EXACT) != 0u) { x = gelu_exact(x); }
  if ((p.flags & GELU_TANH) != 0u) { x = gelu_tanh(x); }
  if ((p.flags & ACCUMULATE) != 0u) { out[o] = out[o] + x; } else { out[o] = x; }
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
  let col0 = group.x * COLS;
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  var bcc0 = vec4<f32>();
  var bcc1 = vec4<f32>();
  var bcc2 = vec4<f32>();
  var bcc3 = vec4<f32>();
  let inputMajor = (p.flags & INPUT_MAJOR) != 0u;
  let slices = (p.K + SLICE - 1u) / SLICE;
  for (var s = 0u; s < slices; s++) {
    let k0 = s * SLICE;
    for (var t = 0u; t < 16u; t++) {
      let e = li + 64u * t;
      tile_a[e] = load_a(row0 + e / SLICE, k0 + e % SLICE);
    }
    // neighbouring invocations read neighbouring floats of w: along c (input-major) or k (torch)
    for (var t = 0u; t < 32u; t++) {
      let e = li + 64u * t;
      let k = select(e % SLICE, e / COLS, inputMajor);
      let c = select(e / SLICE, e % COLS, inputMajor);
      tile_w[k * 16u + c / 4u][c % 4u] = load_w(k0 + k, col0 + c);
    }
    workgroupBarrier();
    for (var k = 0u; k < SLICE; k++) {
      let wk = tile_w[k * 16u + local.x];
      let wl = tile_w[k * 16u + local.x + 8u];
      let a0 = tile_a[local.y * SLICE + k];
      let a1 = tile_a[(local.y + 8u) * SLICE + k];
      let a2 = tile_a[(local.y + 16u) * SLICE + k];
      let a3 = tile_a[(local.y + 24u) * SLICE + k];
      acc0 += a0 * wk;
      acc1 += a1 * wk;
      acc2 += a2 * wk;
      acc3 += a3 * wk;
      bcc0 += a0 * wl;
      bcc1 += a1 * wl;
      bcc2 += a2 * wl;
      bcc3 += a3 * wl;
    }
    workgroupBarrier();
  }
  let col = col0 + 4u * local.x;
  store_row(row0 + local.y, col, acc0);
  store_row(row0 + local.y + 8u, col, acc1);
  store_row(row0 + local.y + 16u, col, acc2);
  store_row(row0 + local.y + 24u, col, acc3);
  store_row(row0 + local.y, col + 32u, bcc0);
  store_row(row0 + local.y + 8u, col + 32u, bcc1);
  store_row(row0 + local.y + 16u, col + 32u, bcc2);
  store_row(row0 + local.y + 24u, col + 32u, bcc3);
}
