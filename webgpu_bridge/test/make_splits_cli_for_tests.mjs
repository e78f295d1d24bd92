// tests/test_split_maker_js.py's bridge to make_splits.js: reads a JSON list of jobs (a file
// named on the command line), writes one result per job as a JSON list on stdout:
//   {json, warnings} (toJson's text), {error, type} (a refusal), {gap} (gapValue's repr) or
//   {permutations} (successive permutations of one default_rng).
// A job: {options} (makeSplits' options; the strings "__NaN__", "__Infinity__" and
// "__-Infinity__" stand for those numbers, `typed: {name: "Float64Array"}` makes a column a
// typed array), `fingerprint` (added to the object as the page adds it); {gapText}; or
// {permutations: {seed, sizes}}.
import { readFileSync } from "node:fs";
import { makeSplits, pyRepr, toJson, gapValue } from "../src/make_splits.js";
import { defaultRng } from "../src/numpy_random.js";

const SPECIAL = { __NaN__: NaN, __Infinity__: Infinity, "__-Infinity__": -Infinity };
const TYPED = { Float64Array, Float32Array, Int32Array };

function run(job) {
  try {
    if ("gapText" in job) return { gap: pyRepr(gapValue(job.gapText)) };
    if ("permutations" in job) {
      const { seed, sizes } = job.permutations;
      const rng = defaultRng(seed);
      return { permutations: sizes.map((n) => Array.from(rng.permutation(n))) };
    }
    const options = { ...job.options };
    for (const [name, type] of Object.entries(job.typed ?? {})) options[name] = TYPED[type].from(options[name]);
    const warnings = [];
    const t0 = performance.now();
    let splits = makeSplits({ ...options, warnings });
    const ms = performance.now() - t0;
    if (job.fingerprint) splits = { ...splits, fingerprint: job.fingerprint };
    return { json: toJson(splits), warnings, ms };
  } catch (err) {
    return { error: err.message, type: err instanceof TypeError ? "TypeError" : "ValueError" };
  }
}

const special = (_, v) => (typeof v === "string" && Object.hasOwn(SPECIAL, v) ? SPECIAL[v] : v);
const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"), special);
process.stdout.write(JSON.stringify(jobs.map(run)));
