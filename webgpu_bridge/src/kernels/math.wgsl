// Shared functions of the kernels: src/kernels.js puts this file in front of every kernel
// source (WGSL has no include).
//
// Exact GELU, x * Phi(x) = x * erfc(-x / sqrt 2) / 2. WGSL has no erf: erfc(z), z >= 0, is
// Numerical Recipes' erfcc (Chebyshev fit, t = 1 / (1 + z / 2), |relative error| < 1.2e-7
// for every z >= 0), and Phi(x) = 1 - erfc(z) / 2 for x >= 0, erfc(z) / 2 for x < 0, so the
// negative side keeps its relative precision. Measured on the GPU (SwiftShader, through
// linear.wgsl) against a float64 erf at the 24,577 points -12 + i/1024 of [-12, 12]
// (test/tabicl_gpu.test.js, "exact GELU"): max |error| 3.7e-7 (at x = 5.06, where rounding
// the true value to float32 alone costs up to 2.4e-7; 1.9e-7 within [-3, 3]), max relative
// error 4.1e-7 (x = -1.23), at most 6.1 float32 ulps, over the whole range including the
// negative tail down to 1e-30.
// exp(y) to about 1 ulp (Cephes' expf: y = k ln 2 + r with ln 2 in two parts, a degree-7
// polynomial on |r| <= ln 2 / 2, then 2^k): WGSL's exp promises only 3 + 2|y| ulp, which
// would be 4e-6 relative in GELU's tail.
fn exp_accurate(y: f32) -> f32 {
  let k = round(y * 1.4426950408889634);
  var r = y - k * 0.693359375;
  r = r - k * -2.12194440e-4;
  let p = ((((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r +
    1.6666665459e-1) * r + 5.0000001201e-1) * r * r + r) + 1.0;
  return ldexp(p, i32(k));
}

// erfc(ax / sqrt 2) for ax >= 0.
fn tabicl_erfc_scaled(ax: f32) -> f32 {
  let z = ax * 0.7071067811865476;
  let t = 1.0 / (1.0 + 0.5 * z);
  let poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
    t * (-0.82215223 + t * 0.17087277))))))));
  // exp(-z^2) = exp(-ax^2 / 2) as exp(-xh^2 / 2) exp((xh - ax)(xh + ax) / 2), xh = ax cut
  // to 12 significant bits (xh^2 is exact in float32; fdlibm's erfc splits the same way),
  // so the rounding of z and z^2 (relative 1.2e-7 and more, times z^2 = 64 at x = -11.3)
  // does not become the tail's relative error.
  let xh = bitcast<f32>(bitcast<u32>(ax) & 0xfffff000u);
  return t * exp_accurate(-0.5 * xh * xh) * exp_accurate(0.5 * (xh - ax) * (xh + ax) + poly);
}

fn gelu_exact(x: f32) -> f32 {
  let c = tabicl_erfc_scaled(abs(x));
  return x * select(0.5 * c, 1.0 - 0.5 * c, x >= 0.0);
}

// tanh through exp(-2|u|), so large |u| saturates to +-1 instead of overflowing.
fn tanh_stable(u: f32) -> f32 {
  let e = exp(-2.0 * abs(u));
  return sign(u) * (1.0 - e) / (1.0 + e);
}

// GELU in the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): icl_transformer's
// and tabular_fm's activation (their numpy twins use the same form).
fn gelu_tanh(x: f32) -> f32 {
  let c = 0.7978845608028654; // sqrt(2 / pi)
  return 0.5 * x * (1.0 + tanh_stable(c * (x + 0.044715 * x * x * x)));
}
