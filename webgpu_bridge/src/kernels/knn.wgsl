// kNN building blocks on standardized features.
// distances: dist[i, j] = sum_f (xq[i, f] - xc[j, f])^2 (direct form, no expansion).
// topk: the k smallest distances of each query row, ties to the lower context index
// (a strict < on an increasing scan keeps the earlier row). k at most 64.
struct Params { m: u32, n: u32, F: u32, k: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> xq: array<f32>;
@group(0) @binding(2) var<storage, read> xc: array<f32>;
@group(0) @binding(3) var<storage, read_write> dist: array<f32>;
@group(0) @binding(4) var<storage, read_write> idx: array<u32>;

@compute @workgroup_size(16, 16)
fn distances(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x;
  let i = gid.y;
  if (i >= p.m || j >= p.n) { return; }
  var s = 0.0;
  for (var f = 0u; f < p.F; f++) {
    let d = xq[i * p.F + f] - xc[j * p.F + f];
    s += d * d;
  }
  dist[i * p.n + j] = s;
}

@compute @workgroup_size(64)
fn topk(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= p.m) { return; }
  var bd: array<f32, 64>;
  var bi: array<u32, 64>;
  var count = 0u;
  for (var j = 0u; j < p.n; j++) {
    let d = dist[i * p.n + j];
    if (count == p.k && d >= bd[p.k - 1u]) { continue; }
    var pos = min(count, p.k - 1u);
    while (pos > 0u && bd[pos - 1u] > d) {
      bd[pos] = bd[pos - 1u];
      bi[pos] = bi[pos - 1u];
      pos -= 1u;
    }
    bd[pos] = d;
    bi[pos] = j;
    count = min(count + 1u, p.k);
  }
  for (var r = 0u; r < p.k; r++) { idx[i * p.k + r] = bi[r]; }
}
