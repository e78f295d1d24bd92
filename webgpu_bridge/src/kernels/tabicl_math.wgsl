// Shared functions of the tabicl_* kernels; src/tabicl/layers.js puts this file in front of
// every tabicl_* kernel source (WGSL has no include).
//
// Exact GELU, x * Phi(x) = x * erfc(-x / sqrt 2) / 2. WGSL has no erf: erfc(z), z >= 0, is
// Numerical Recipes' erfcc (Chebyshev fit, t = 1 / (1 + z / 2), |relative error| < 1.2e-7
// for every z >= 0), and Phi(x) = 1 - erfc(z) / 2 for x >= 0, erfc(z) / 2 for x < 0, so the
// negative side keeps its relative precision. Measured on the GPU (SwiftShader) against a
// float64 erf over x in [-12, 12] (test/tabicl_gpu.test.js, "exact GELU"): see
// src/tabicl/README.md for the figures.
fn tabicl_erfc(z: f32) -> f32 {
  let t = 1.0 / (1.0 + 0.5 * z);
  let poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
    t * (-0.82215223 + t * 0.17087277))))))));
  return t * exp(poly - z * z);
}

fn gelu_exact(x: f32) -> f32 {
  let c = tabicl_erfc(abs(x) * 0.7071067811865476);
  return x * select(0.5 * c, 1.0 - 0.5 * c, x >= 0.0);
}

// tanh through exp(-2|u|), so large |u| saturates to +-1 instead of overflowing.
fn tanh_stable(u: f32) -> f32 {
  let e = exp(-2.0 * abs(u));
  return sign(u) * (1.0 - e) / (1.0 + e);
}
