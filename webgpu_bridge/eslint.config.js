// ESLint (flat config) for the bridge, its tests and the WebGPU timing page: `npm run lint`.
import js from "@eslint/js";
import globals from "globals";

// WebGPU's constants are globals in browsers and in Node once the `webgpu` package is set up.
const webgpu = { GPUBufferUsage: "readonly", GPUMapMode: "readonly" };

export default [
  { ignores: ["node_modules/"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2025, sourceType: "module" },
    rules: {
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "prefer-const": "error",
      "no-var": "error",
      eqeqeq: ["error", "smart"],
      curly: ["error", "multi-line"],
      // the densest bodies were split (issue 10); keep functions short enough to read
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
      "max-depth": ["error", 4],
    },
  },
  {
    // the bridge runs in pages, Web Workers and Node alike
    files: ["src/**/*.js"],
    languageOptions: { globals: { ...globals.browser, ...globals.worker, ...globals.node, ...webgpu } },
  },
  {
    files: ["page/**/*.js"],
    languageOptions: { globals: { ...globals.browser, ...webgpu } },
  },
  {
    files: ["test/**/*.js", "test/**/*.mjs", "bin/**/*.mjs", "bench/**/*.mjs", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node, ...webgpu } },
  },
];
