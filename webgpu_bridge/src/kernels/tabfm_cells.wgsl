// Google TabFM's cell embedding features (models/tabfm/cells.py), column-major for the
// column stage: token t = jj * rows + r (column j = j0 + jj < j0 + cols, row r < rows) gets
//   out[t, 0 … 2F)       = Σ_g numerical members' [sin(v f), cos(v f)]
//   out[t, 2F]           = how many group members are numerical
//   out[t, 2F+1 … 4F+1)  = Σ_g categorical members' [sin(v f), cos(v f)]
//   out[t, 4F+1]         = how many are categorical
// over the group members g < G, the cells x[r, (j + 2^g − 1) mod d] (NaN already −100 on
// the CPU), f the member's F frequencies (fourier_frequencies_cat where its column is
// categorical, else fourier_frequencies, row g); each sum in g order from 0. The cell
// embedder's two maps and biases then act as one product with the packed weight
// [W | b | W_cat | b_cat] (layers.js). sin and cos of the float32 product v·f to about an
// ulp: the argument reduced by π/2 in three parts (Cody–Waite: exact for |k| < 2^16, far
// past any cell) and Cephes' sinf/cosf polynomials on |r| ≤ π/4 (WGSL's sin and cos promise
// 2^-11 only on [−π, π]). One invocation per (token, k < 2F).
struct Params { rows: u32, H: u32, d: u32, j0: u32, cols: u32, F: u32, G: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> cat: array<f32>;
@group(0) @binding(3) var<storage, read> freqs: array<f32>;
@group(0) @binding(4) var<storage, read> freqsCat: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

fn sin_poly(r: f32) -> f32 {
  let z = r * r;
  return r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
}

fn cos_poly(r: f32) -> f32 {
  let z = r * r;
  return 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
}

// sin(a) (wantCos false) or cos(a) of a float32 argument.
fn sincos(a: f32, wantCos: bool) -> f32 {
  let k = round(a * 0.6366197723675814);
  var r = a - k * 1.5703125;
  r = r - k * 4.837512969970703125e-4;
  r = r - k * 7.549789948768648e-8;
  let q = (i32(k) + select(0, 1, wantCos)) & 3;
  let s = sin_poly(r);
  let c = cos_poly(r);
  if (q == 0) { return s; }
  if (q == 1) { return c; }
  if (q == 2) { return -s; }
  return -c;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let F2 = 2u * p.F;
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.cols * p.rows * F2) { return; }
  let k = i % F2;
  let t = i / F2;
  let r = t % p.rows;
  let j = p.j0 + t / p.rows;
  let fk = k % p.F;
  var num = 0.0;
  var catSum = 0.0;
  var nNum = 0.0;
  var nCat = 0.0;
  for (var g = 0u; g < p.G; g++) {
    let col = (j + (1u << g) - 1u) % p.d;
    let v = x[r * p.H + col];
    let isCat = cat[col] != 0.0;
    let f = select(freqs[g * p.F + fk], freqsCat[g * p.F + fk], isCat);
    let phi = sincos(v * f, k >= p.F);
    if (isCat) {
      catSum += phi;
      nCat += 1.0;
    } else {
      num += phi;
      nNum += 1.0;
    }
  }
  let W = 2u * F2 + 2u;
  out[t * W + k] = num;
  out[t * W + F2 + 1u + k] = catSum;
  if (k == 0u) {
    out[t * W + F2] = nNum;
    out[t * W + W - 1u] = nCat;
  }
}
