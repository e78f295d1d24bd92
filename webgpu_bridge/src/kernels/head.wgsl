// Classification head on logits[rows x N] (N = max_classes): softmax over the first C
// columns (max subtracted first), written to probs[rows x C].
struct Params { rows: u32, N: u32, C: u32, pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x;
  if (row >= p.rows) { return; }
  let base = row * p.N;
  var mx = -3.0e38;
  for (var c = 0u; c < p.C; c++) { mx = max(mx, logits[base + c]); }
  var z = 0.0;
  for (var c = 0u; c < p.C; c++) { z += exp(logits[base + c] - mx); }
  for (var c = 0u; c < p.C; c++) { probs[row * p.C + c] = exp(logits[base + c] - mx) / z; }
}
