// Rotary position encoding (RoPE) in place on queries or keys, for every model: row r has
// position r % period (a row's tokens lie consecutively, so r % period is the token's place
// in its row; period Tq for queries that are a row's first tokens); per head the pairs
// (i, i + dh/2) (split halves: TabICLv2, TabPFN v3) or (2i, 2i + 1) (interleaved: TabICLv1,
// Google TabFM) turn by the angle pos * freqs[i]: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin).
// cos and sin come from `table` (pos * dh/2 + i: cos, sin; operators.js's ropeTable),
// computed on the CPU in float64 from the float32 angles (WGSL's cos and sin promise 2^-11
// only within [-pi, pi]). Rows at stride `stride` from float `off` (e.g. the key half of a
// key/value row), heads dh apart.
struct Params { rows: u32, period: u32, H: u32, dh: u32, stride: u32, off: u32, interleaved: u32,
                pad: u32 }

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = p.dh / 2u;
  let inv = gid.x + gid.y * 65535u * 64u;
  if (inv >= p.rows * p.H * half) { return; }
  let i = inv % half;
  let h = (inv / half) % p.H;
  let r = inv / (half * p.H);
  let pos = r % p.period;
  let head = r * p.stride + p.off + h * p.dh;
  let ia = select(head + i, head + 2u * i, p.interleaved == 1u);
  let ib = select(ia + half, ia + 1u, p.interleaved == 1u);
  let c = table[2u * (pos * half + i)];
  let s = table[2u * (pos * half + i) + 1u];
  let x1 = x[ia];
  let x2 = x[ib];
  x[ia] = x1 * c - x2 * s;
  x[ib] = x2 * c + x1 * s;
}
