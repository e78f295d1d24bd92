// TabICL end to end on WebGPU: the JavaScript twin of pkg/arenalite/models/tabicl/
// predictor.py. The ensemble's member inputs (./ensemble.js: preprocessing, feature
// permutations, class shifts) → per member fitContext + queryBatches (./model.js, both KV
// caches; ONE member's caches alive at a time: every member reuses the cache key "m0", so a
// member's fitContext replaces the previous one's buffers and memory stays that of one
// member; a classifier checkpoint without feature groups, TabICLv1's layout, also keeps
// each model call's first column stage, which the call's other members take reordered to
// their feature permutations, as predictor.py's member_outputs does) → aggregation
// (predict_proba, or the regressor's mean and spread).
//
// Timings: one StageTimer across the members, so T_fold = T_embed + Σ T_layer + T_head over
// the whole ensemble (as predictor.py sums them): `embed` = preprocessing and member inputs
// (CPU) + every member's column stage, one `layers` entry per row block then per ICL layer
// (summed over the members), `head` = every member's head with its read-back + the
// aggregation (CPU); GPU timestamps of the same stages where the device has timestamp-query.
import { now } from "../engine.js";
import { pyRepr } from "../checkpoint/pickle.js";
import { aggregateProba, fitMembers, memberInputs, modelBatches, predictRegression } from "./ensemble.js";
import { TabICLMember } from "./model.js";

/** Where TabICL weights come from (predictor.py's WHERE_WEIGHTS, word for word). */
export const WHERE_WEIGHTS = "download tabicl-classifier-v2-20260212.ckpt " +
  "(classification) or the TabICL regressor checkpoint from the Hugging Face hub (repo " +
  "jingang/TabICL) and pass {'name': 'tabicl', 'weights': PATH} (on the command line " +
  "--model tabicl:weights=PATH); optionally convert it first with " +
  "'arenalite convert tabicl CKPT -o OUT.safetensors'";
/** The error without weights (predictor.py's NO_WEIGHTS). */
export const NO_WEIGHTS = "model 'tabicl' needs a TabICL checkpoint: " + WHERE_WEIGHTS;

/** predictor.check_task: an Error when the checkpoint cannot do `task` (its max_classes). */
export function checkTabiclTask(config, task, where) {
  const mc = config.max_classes;
  if (task === "regression" && mc > 0) {
    throw new Error(`${where} is a TabICL classifier (max_classes ${mc}); ` +
      "task 'regression' needs a TabICL regressor checkpoint");
  }
  if (task !== "regression" && mc === 0) {
    throw new Error(`${where} is a TabICL regressor (max_classes 0); task ${pyRepr(task)} ` +
      "needs a TabICL classifier checkpoint");
  }
}

function rows2d(x, rows, cols) {
  return { rows, cols, data: x };
}

/** Member i's context (x, y) and query rows out of memberInputs' arrays (views, no copy). */
function memberSlices(inputs, i) {
  const { nRows, nFeatures: F, nTrain: n } = inputs;
  const at = i * nRows * F;
  return {
    xTrain: inputs.x.subarray(at, at + n * F),
    yTrain: inputs.yTrain.subarray(i * n, (i + 1) * n),
    xTest: inputs.x.subarray(at + n * F, at + nRows * F),
  };
}

/** The members' raw outputs (members × M × width, float32), one member's caches at a time. */
async function memberOutputs(member, inputs, { timer, batchRows, onMember, batches = null }) {
  const parts = [];
  let width = 0;
  // a classifier without feature groups: each model call's first column stage, shared with
  // the call's other members (predictor.py's member_outputs, model.py's SharedColumns)
  const firstOf = new Map();
  for (const batch of batches ?? []) for (const i of batch) firstOf.set(i, batch[0]);
  const sources = new Map();
  for (let i = 0; i < inputs.nMembers; i++) {
    const { xTrain, yTrain, xTest } = memberSlices(inputs, i);
    const permutation = inputs.featurePerms[i];
    const first = firstOf.get(i);
    const columns = first === undefined ? null
      : first === i ? { id: i, permutation } : { source: sources.get(first), permutation };
    const context = await member.fitContext(xTrain, yTrain, { timer, columns });
    if (first === i) sources.set(i, context.sharedColumns);
    const { output } = await member.queryBatches(context, xTest, { batchRows, timer });
    width = member.width(context);
    parts.push(output);
    onMember?.(i + 1, inputs.nMembers);
  }
  const all = new Float32Array(parts.length * inputs.nTest * width);
  parts.forEach((p, i) => all.set(p, i * inputs.nTest * width));
  return { data: all, shape: [inputs.nMembers, inputs.nTest, width] };
}

/** Regression: the mean (the regressor's predict) and the spread, in the target's units (predictor.py). */
function regressionOutput(raw, plan) {
  const mean = predictRegression(raw, plan, "mean").data;
  const [members, M, Q] = raw.shape;
  const spread = new Float64Array(M);
  for (let r = 0; r < M; r++) {
    const means = new Float64Array(members);
    let meanVar = 0;
    for (let i = 0; i < members; i++) {
      const q = raw.data.subarray((i * M + r) * Q, (i * M + r + 1) * Q);
      let s = 0;
      for (const v of q) s += v;
      const mu = s / Q;
      let ss = 0;
      for (const v of q) ss += (v - mu) * (v - mu);
      means[i] = mu * plan.yScale + plan.yMean;
      meanVar += (ss / (Q - 1)) * plan.yScale ** 2;
    }
    const mm = means.reduce((a, b) => a + b, 0) / members;
    const varOfMeans = means.reduce((a, b) => a + (b - mm) * (b - mm), 0) / members;
    spread[r] = Math.sqrt(meanVar / members + varOfMeans);
  }
  return { output: mean, spread };
}

/** Classification: nTest × nClasses probabilities, 0 for a class absent from the context. */
function classOutput(raw, plan, d, temperature) {
  const proba = aggregateProba(raw, plan, { softmaxTemperature: temperature });
  const C = plan.nClasses;
  const width = d.C || Math.max(...plan.classes) + 1;
  const out = new Float32Array(d.m * width);
  for (let r = 0; r < d.m; r++) {
    for (let k = 0; k < C; k++) out[r * width + plan.classes[k]] = proba[r * C + k];
  }
  return { output: out };
}

/**
 * `tabicl` on the bridge: `model` checked, its weights read ({config, tensors, shapes[,
 * name]}), `d` validated (Bridge.predict); `model.batchRows` the query batch. Option:
 * `onMember(done, total)` after each member. Resolves to {output, spread (regression),
 * timings, members}.
 */
export async function runTabicl(engine, model, d, { onMember } = {}) {
  const weights = model.weights;
  const where = `checkpoint ${pyRepr(weights.name ?? "<bytes>")}`;
  checkTabiclTask(weights.config, d.task, where);
  const t0 = now();
  const { F, n, m } = d;
  const plan = fitMembers(rows2d(d.xTrain, n, F), Array.from(d.yTrain), d.task, {
    nEstimators: model.n_estimators, outlierThreshold: model.outlier_threshold, randomState: model.random_state,
  });
  const inputs = memberInputs(plan, rows2d(d.xTest, m, F));
  const prepMs = now() - t0;
  const member = await TabICLMember.create(engine, weights, { cacheKey: "m0" });
  const timer = member.timer();
  timer.add("embed", prepMs);
  const share = Boolean(plan.classPerms) && !weights.config.col_feature_group;
  const raw = await memberOutputs(member, inputs, { timer, batchRows: model.batchRows, onMember,
    batches: share ? modelBatches(plan) : null });
  const t1 = now();
  const result = d.task === "regression" ? regressionOutput(raw, plan)
    : classOutput(raw, plan, d, model.softmax_temperature);
  timer.add("head", now() - t1);
  const timings = await timer.finish();
  // what each `layers` entry is: the row interaction's blocks, then the ICL layers
  timings.layerNames = [...member.row.blocks.map((_, i) => `row ${i}`), ...member.icl.blocks.map((_, i) => `icl ${i}`)];
  return { ...result, timings, members: plan.nMembers };
}
