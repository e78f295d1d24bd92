// Label aggregation for the distance models. y holds class indices (as f32) or the
// standardized regression target; C = 0 means regression (one output per row).
// knn_vote: p_c = (count_c + 1) / (k + C), or the neighbours' mean target.
// softmax_vote: w_j = softmax_j(-dist[i, j] * inv_t); p_c = (n s_c + 1) / (n + C) with
// s_c = sum_j w_j [y_j = c], or sum_j w_j y_j. Sums are compensated (Kahan).
struct Params { m: u32, n: u32, k: u32, C: u32, inv_t: f32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> dist: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn knn_vote(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= p.m) { return; }
  if (p.C == 0u) {
    var s = 0.0;
    for (var r = 0u; r < p.k; r++) { s += y[idx[i * p.k + r]]; }
    out[i] = s / f32(p.k);
    return;
  }
  for (var c = 0u; c < p.C; c++) {
    var count = 0u;
    for (var r = 0u; r < p.k; r++) {
      if (u32(y[idx[i * p.k + r]]) == c) { count += 1u; }
    }
    out[i * p.C + c] = f32(count + 1u) / f32(p.k + p.C);
  }
}

@compute @workgroup_size(64)
fn softmax_vote(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= p.m) { return; }
  let base = i * p.n;
  var dmin = 3.0e38;
  for (var j = 0u; j < p.n; j++) { dmin = min(dmin, dist[base + j]); }
  var z = 0.0;
  var zc = 0.0;
  for (var j = 0u; j < p.n; j++) {
    let t = exp(-(dist[base + j] - dmin) * p.inv_t) - zc;
    let u = z + t;
    zc = (u - z) - t;
    z = u;
  }
  let nf = f32(p.n);
  if (p.C == 0u) {
    var s = 0.0;
    var sc = 0.0;
    for (var j = 0u; j < p.n; j++) {
      let t = exp(-(dist[base + j] - dmin) * p.inv_t) * y[j] - sc;
      let u = s + t;
      sc = (u - s) - t;
      s = u;
    }
    out[i] = s / z;
    return;
  }
  for (var c = 0u; c < p.C; c++) {
    var s = 0.0;
    var sc = 0.0;
    for (var j = 0u; j < p.n; j++) {
      if (u32(y[j]) == c) {
        let t = exp(-(dist[base + j] - dmin) * p.inv_t) - sc;
        let u = s + t;
        sc = (u - s) - t;
        s = u;
      }
    }
    out[i * p.C + c] = (nf * (s / z) + 1.0) / (nf + f32(p.C));
  }
}
