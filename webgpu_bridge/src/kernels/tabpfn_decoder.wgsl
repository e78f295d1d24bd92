// TabPFN v3's classification decoder after its attention (decoder.py's logits): probs holds
// per query row and head the attention's output over the context rows' one-hot targets, in
// slices of dd classes (one attention each; class c of row r, head h at
// ((c / dd) * rows + r) * H * dd + h * dd + c % dd); the heads' mean p, for the first
// `classes` classes (zero beyond, up to nOut), becomes log(max(p, 1e-5) + 3e-5).
// One invocation per output.
struct Params { rows: u32, H: u32, dd: u32, classes: u32, nOut: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.rows * p.nOut) { return; }
  let c = i % p.nOut;
  let r = i / p.nOut;
  var s = 0.0;
  if (c < p.classes) {
    let at = ((c / p.dd) * p.rows + r) * p.H * p.dd + c % p.dd;
    for (var h = 0u; h < p.H; h++) { s += probs[at + h * p.dd]; }
    s = s / f32(p.H);
  }
  out[i] = log(max(s, 1e-5) + 3e-5);
}
