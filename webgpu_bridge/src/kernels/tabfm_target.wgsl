// Google TabFM's target embeddings onto the context rows: out holds `count` rows of E
// (a column stage's column-major cells: row t is context row t % N; or the ICL stage's
// N rows); mode 1 adds the class table's row y (table: maxC × E, y clipped to 0 … maxC − 1
// as cells.py's lookup; the ICL's table is y_encoder's column plus its bias, made on the
// CPU as icl.py adds them), mode 2 adds table row t % N itself (the regression target's
// MLP output, computed first).
struct Params { count: u32, N: u32, E: u32, mode: u32, maxC: u32, pad0: u32, pad1: u32, pad2: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x + gid.y * 65535u * 64u;
  if (i >= p.count * p.E) { return; }
  let e = i % p.E;
  let r = (i / p.E) % p.N;
  if (p.mode == 1u) {
    let c = u32(clamp(y[r], 0.0, f32(p.maxC - 1u)));
    out[i] = out[i] + table[c * p.E + e];
  } else {
    out[i] = out[i] + table[r * p.E + e];
  }
}
