// TabPFN v3's ensemble members as tabpfn 9.2.0's estimators draw them from `random_state`:
// the JavaScript twin of pkg/arenalite/models/tabpfn/ensemble.py, bit for bit (numpy's
// default_rng through ../numpy_random.js). Per member: the feature shift count, the class
// permutation (classification), the index of its preprocessor config (regression: also of
// its target transform) and the seed of its preprocessing pipeline.
import { defaultRng } from "../numpy_random.js";

export const MAXIMUM_FEATURE_SHIFT = 1000;
export const CLASS_SHUFFLE_OVERESTIMATE_FACTOR = 3;
export const CLASS_SHIFT_METHODS = Object.freeze(["shuffle", "rotate", null]);
const INT64_MAX = (1n << 63n) - 1n;
const INT32_MAX = 2 ** 31 - 1;

/** Each item `count` times in order, then the first items again until there are nMembers. */
function balance(nItems, count, nMembers) {
  const out = [];
  for (let i = 0; i < nItems; i++) for (let k = 0; k < count; k++) out.push(i);
  for (let i = 0; out.length < nMembers; i++) out.push(i);
  return out;
}

function featureShifts(rng, nMembers) {
  const start = rng.integers(0, MAXIMUM_FEATURE_SHIFT);
  return rng.choiceWithoutReplacement(nMembers, nMembers).map((i) => start + i);
}

function lexCompare(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The package's _generate_class_permutations (M arrays of C, or null for no shift):
 * "rotate" or "shuffle" as ensemble.py's class_permutations.
 */
export function classPermutations(rng, nMembers, nClasses, method) {
  if (method === null || method === undefined) return null;
  if (method === "rotate") {
    const shifts = Array.from(rng.permutation(nClasses));
    const perms = shifts.map((s) => Array.from({ length: nClasses }, (_, i) => (((i - s) % nClasses) + nClasses) % nClasses));
    return rng.integers(0, nClasses, nMembers).map((c) => perms[c]);
  }
  if (method === "shuffle") {
    const rows = nMembers * CLASS_SHUFFLE_OVERESTIMATE_FACTOR;
    const noise = rng.random(rows * nClasses);
    const sorted = [];
    for (let r = 0; r < rows; r++) {
      const row = Array.from({ length: nClasses }, (_, i) => i);
      row.sort((a, b) => noise[r * nClasses + a] - noise[r * nClasses + b] || a - b);
      sorted.push(row);
    }
    sorted.sort(lexCompare);
    const uniqs = sorted.filter((row, i) => i === 0 || lexCompare(row, sorted[i - 1]) !== 0);
    const chosen = [];
    for (const u of uniqs) for (let k = 0; k < Math.floor(nMembers / uniqs.length); k++) chosen.push(u);
    const extra = nMembers % uniqs.length;
    if (extra > 0) for (const i of rng.integers(0, uniqs.length, extra)) chosen.push(uniqs[i]);
    return chosen;
  }
  throw new Error(`class_shift_method must be one of ('shuffle', 'rotate', None), got ${JSON.stringify(method)}`);
}

/** TabPFNEnsemblePreprocessor.pipeline_seeds: the members' int32 pipeline seeds. */
export function pipelineSeeds(randomState, nMembers) {
  const seeds = defaultRng(randomState).integers(0n, INT64_MAX, 3);
  return defaultRng(seeds[0]).integers(0, INT32_MAX, nMembers);
}

/**
 * The members' draws for an integer `randomState` (ensemble.py's draw_members):
 * {featureShifts, configIndex, classPerms (or null), targetIndex (or null), pipelineSeeds,
 * nMembers}. Classification: `nClasses` (and `classShiftMethod`); regression:
 * `nTargetTransforms`.
 */
export function drawMembers(nMembers, nConfigs, randomState, { nClasses = null, classShiftMethod = "shuffle", nTargetTransforms = null } = {}) {
  if (typeof randomState !== "number" || !Number.isInteger(randomState)) {
    throw new Error(`random_state must be an integer, got ${JSON.stringify(randomState)}`);
  }
  if (nMembers < 1 || nConfigs < 1) throw new Error("n_members and n_configs must be at least 1");
  if ((nClasses === null) === (nTargetTransforms === null)) {
    throw new Error("pass n_classes (classification) or n_target_transforms (regression)");
  }
  const rng = defaultRng(randomState);
  const shifts = featureShifts(rng, nMembers);
  let perms = null;
  let config;
  let target = null;
  if (nClasses !== null) {
    perms = classPermutations(rng, nMembers, nClasses, classShiftMethod);
    config = balance(nConfigs, Math.floor(nMembers / nConfigs), nMembers);
  } else {
    const k = nConfigs * nTargetTransforms;
    const combo = balance(k, Math.floor(nMembers / k), nMembers);
    config = combo.map((c) => Math.floor(c / nTargetTransforms));
    target = combo.map((c) => c % nTargetTransforms);
  }
  return {
    nMembers, featureShifts: shifts, configIndex: config, classPerms: perms, targetIndex: target,
    pipelineSeeds: pipelineSeeds(randomState, nMembers),
  };
}
