// tabular_fm step 3 (docs/models.md): the F + 1 tokens of each row, out[rows x (F+1) x D].
// Cell j: x[r, j] * cell.w + cell.b + feature.emb[j]; the target token: target.cls[y] (mode 0,
// classification context), y * target.reg.w + target.reg.b (mode 1, regression context, y
// standardized) or target.unknown (mode 2, query rows). The embedding tensors arrive packed
// in one buffer (`pack`, offsets in floats below) to stay within 8 storage bindings.
struct Params { rows: u32, F: u32, D: u32, mode: u32, cls_off: u32, femb_off: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read> pack: array<f32>;  // cell.w, cell.b, reg.w, reg.b, unknown, cls, femb
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let T = p.F + 1u;
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.rows * T * p.D) { return; }
  let d = i % p.D;
  let token = (i / p.D) % T;
  let row = i / (p.D * T);
  let D = p.D;
  if (token < p.F) {
    out[i] = x[row * p.F + token] * pack[d] + pack[D + d] + pack[p.femb_off + token * D + d];
  } else if (p.mode == 0u) {
    out[i] = pack[p.cls_off + u32(y[row]) * D + d];
  } else if (p.mode == 1u) {
    out[i] = y[row] * pack[2u * D + d] + pack[3u * D + d];
  } else {
    out[i] = pack[4u * D + d];
  }
}
