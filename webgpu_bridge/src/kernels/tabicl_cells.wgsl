// TabICL's column-stage input (ColEmbedding): the feature-group gather and in_linear, plus
// the target embedding on context rows. Column g of the chunk (g0 + gl, gl < Gc) of row
// t < rows reads its `size` cells: mode 1 ("same") x[t, (g + 2^i) % H], mode 2 ("valid")
// x[t, g * size + i] (zero past H), mode 0 (no grouping) x[t, g];
//   out[(gl * rows + t) * E + e] = b[e] + sum_i cell_i * w[e * size + i]
// (-100, the skip value, where every cell is -100), then withTarget 1 adds y_encoder's one-hot
// column yw[e * maxC + y[t]] + yb[e], withTarget 2 (regression) y[t] * yw[e] + yb[e].
struct Params { rows: u32, H: u32, g0: u32, Gc: u32, E: u32, size: u32, mode: u32, withTarget: u32,
                maxC: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read> yw: array<f32>;
@group(0) @binding(5) var<storage, read> yb: array<f32>;
@group(0) @binding(6) var<storage, read> y: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let idx = gid.x + gid.y * 65535u * 64u;
  if (idx >= p.Gc * p.rows * p.E) { return; }
  let e = idx % p.E;
  let t = (idx / p.E) % p.rows;
  let g = p.g0 + idx / (p.E * p.rows);
  var s = 0.0;
  var skip = true;
  for (var i = 0u; i < p.size; i++) {
    var c = 0.0;
    if (p.mode == 1u) {
      c = x[t * p.H + (g + (1u << i)) % p.H];
    } else if (p.mode == 2u) {
      let col = g * p.size + i;
      if (col < p.H) { c = x[t * p.H + col]; }
    } else {
      c = x[t * p.H + g];
    }
    skip = skip && c == -100.0;
    s += c * w[e * p.size + i];
  }
  var v = select(s + b[e], -100.0, skip);
  if (p.withTarget == 1u) {
    v += yw[e * p.maxC + u32(y[t])] + yb[e];
  } else if (p.withTarget == 2u) {
    v += y[t] * yw[e] + yb[e];
  }
  out[idx] = v;
}
