// What every GPU test of the bridge shares: dawn.node on Vulkan SwiftShader (the ICD and
// libvulkan that Debian's chromium ships), run in a child process because the Vulkan loader
// reads VK_ICD_FILENAMES / LD_LIBRARY_PATH at start-up. `reportTest` runs a child script
// once (optionally after numpy made its reference cases), reads the JSON report it writes,
// and gives every test of the file that report; a missing SwiftShader fails the tests
// unless ARENALITE_ALLOW_NO_BROWSER=1 says it may be missing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

export const LIB = "/usr/lib/chromium";
export const ICD = `${LIB}/vk_swiftshader_icd.json`;
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const haveGpu = existsSync(ICD) && existsSync(`${LIB}/libvulkan.so.1`);
const allowMissing = process.env.ARENALITE_ALLOW_NO_BROWSER === "1";
/** The repository's Python for numpy references ($ARENALITE_PYTHON or .venv-pins). */
export const python = process.env.ARENALITE_PYTHON ?? join(ROOT, ".venv-pins/bin/python");
export const havePython = process.env.ARENALITE_SKIP_PYTHON !== "1" && existsSync(python);

/** The environment a child needs to find SwiftShader. */
export function swiftshaderEnv() {
  return { ...process.env, VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? ICD,
    LD_LIBRARY_PATH: [LIB, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") };
}

/** Skips (ARENALITE_ALLOW_NO_BROWSER=1) or fails a test when SwiftShader is missing; true when it is there. */
export function requireGpu(t) {
  if (haveGpu) return true;
  if (allowMissing) {
    t.skip(`no ${ICD} (ARENALITE_ALLOW_NO_BROWSER=1)`);
    return false;
  }
  assert.fail(`${ICD} or ${LIB}/libvulkan.so.1 is missing: install Debian's chromium ` +
    "(apt-get install chromium) or set ARENALITE_ALLOW_NO_BROWSER=1");
}

/**
 * `gpuTest(name, (report, t) => …)`: every test of a file on one run of `script` (a file
 * next to the tests), which is called with the report's path (and, when `makeCases` is
 * given and the repository's Python is there, the folder where Python code
 * `makeCases.code` first wrote its cases, called with that folder and
 * JSON.stringify(makeCases.cases)). A run that fails fails every test with its stderr.
 */
export function reportTest(script, { timeout = 900000, makeCases = null } = {}) {
  let report = null;  // the run's report, or the Error it ended in
  const runOnce = () => {
    const dir = mkdtempSync(join(tmpdir(), "arenalite-gpu-"));
    const out = join(dir, "report.json");
    try {
      const withCases = makeCases !== null && havePython;
      if (withCases) {
        const made = spawnSync(python, ["-c", makeCases.code, dir, JSON.stringify(makeCases.cases)],
          { cwd: ROOT, encoding: "utf8", timeout: 300000 });
        assert.equal(made.status, 0, `numpy reference cases failed:\n${made.stderr}`);
      }
      const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
      const run = spawnSync(process.execPath, [path, out, ...(withCases ? [dir] : [])],
        { env: swiftshaderEnv(), encoding: "utf8", timeout });
      assert.equal(run.status, 0, `GPU run failed (status ${run.status}, signal ${run.signal}):\n${run.stderr}`);
      return JSON.parse(readFileSync(out, "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return (name, fn) => test(name, (t) => {
    if (!requireGpu(t)) return undefined;
    if (report === null) {
      try {
        report = runOnce();
      } catch (error) {
        report = error;
      }
    }
    if (report instanceof Error) throw report;
    return fn(report, t);
  });
}
