// TabPFN v3's cells (pkg/arenalite/models/tabpfn/cells.py) of a chunk of columns, straight
// into x_embed, with the context rows' target embedding added (column.py):
//   out[(c - c0) * rows + r, e] = b[e] + sum_j W[e, j] g_j(r, c)  (+ target(r, e))
// for r < rows, c0 <= c < c0 + cols, e < E: the column stage's layout (a column's rows
// together). g_j, j < G: the standardised cell of column s = (c + 2^j) % F of row r (its
// raw value, or the column's imputation value where it is NaN or ±inf, minus the column's
// mean, over its std + eps, clipped to ±100; `stats` holds impute, mean and std + eps per
// column, fitted on the CPU in float64 as cells.py's fit_scaler); j = G … 2G-1 (with NaN
// indicators): the indicator of the same cell, -2 NaN, +2 +inf, +4 -inf, else 0. The raw
// cells come as their float32 bits, so NaN and ±inf are told apart by their exponent and
// mantissa (WGSL promises nothing of a NaN compared as a float).
// mode (the target): 0 none (query rows), 1 a class row ty[y * E + e], 2 y * ty[e] + tb[e] (regression).
// One invocation per output float, 64 a workgroup, folded into y past 65535 workgroups.
struct Params { rows: u32, F: u32, c0: u32, cols: u32, G: u32, indicators: u32, E: u32, mode: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read> w: array<f32>;
@group(0) @binding(4) var<storage, read> b: array<f32>;
@group(0) @binding(5) var<storage, read> y: array<f32>;
@group(0) @binding(6) var<storage, read> ty: array<f32>;
@group(0) @binding(7) var<storage, read> tb: array<f32>;
@group(0) @binding(8) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.rows * p.cols * p.E) { return; }
  let e = i % p.E;
  let r = (i / p.E) % p.rows;
  let c = p.c0 + i / (p.E * p.rows);
  let width = select(p.G, 2u * p.G, p.indicators == 1u);
  var acc = b[e];
  for (var j = 0u; j < p.G; j++) {
    let s = (c + (1u << j)) % p.F;
    let bits = x[r * p.F + s];
    let special = (bits & 0x7f800000u) == 0x7f800000u;  // NaN or ±inf
    let v = select(bitcast<f32>(bits), stats[3u * s], special);
    let z = clamp((v - stats[3u * s + 1u]) / stats[3u * s + 2u], -100.0, 100.0);
    acc += w[e * width + j] * z;
    if (p.indicators == 1u) {
      var ind = 0.0;
      if (special) {
        if ((bits & 0x007fffffu) != 0u) { ind = -2.0; }
        else if ((bits & 0x80000000u) == 0u) { ind = 2.0; }
        else { ind = 4.0; }
      }
      acc += w[e * width + p.G + j] * ind;
    }
  }
  if (p.mode == 1u) { acc += ty[u32(y[r]) * p.E + e]; }
  if (p.mode == 2u) { acc += y[r] * ty[e] + tb[e]; }
  out[i] = acc;
}
