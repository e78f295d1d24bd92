// Google TabFM end to end on WebGPU: the JavaScript twin of pkg/arenalite/models/tabfm/
// predictor.py. The ensemble's member inputs (./ensemble.js: the unique filter, the
// pipelines, the members' column permutations or subsamples and class shifts) → per member
// fitContext + queryBatches (./model.js's TabFMMember, every KV cache of the context kept on
// the GPU; ONE member's caches alive at a time: every member reuses the cache key "m0") →
// aggregation (predict_proba, or the regressor's mean in the target's units).
//
// `d` is the validated data (numbers: TransformToNumerical's output for a table, see
// ./preprocessing.js's numericTable, with `d.nCategorical` leading categorical columns).
//
// Timings: one StageTimer across the members, split as predictor.py splits T_fold:
// `embed` = preprocessing and member inputs (CPU) + every member's uploads, cell embedding
// and both column stages; one `layers` entry per row stage, then per ICL block (summed over
// the members; timings.layerNames says which); `head` = every member's decoder with its
// read-back + the aggregation (CPU). GPU timestamps of the same stages where the device has
// timestamp-query.
import { now } from "../engine.js";
import { reprString } from "../py_repr.js";
import { checkpointTask, tabfmWeightsFor } from "./checkpoint.js";
import { aggregateProba, aggregateRegression, fitMembers, memberInputs, settingsFrom } from "./ensemble.js";
import { TabFMMember } from "./model.js";

/** Where Google TabFM weights come from (predictor.py's WHERE_WEIGHTS, word for word). */
export const WHERE_WEIGHTS = "download the google/tabfm-1.0.0-pytorch folder from the Hugging Face hub (under " +
  "Google's own terms) and pass {'name': 'tabfm', 'weights': DIR} (on the command line " +
  "--model tabfm:weights=DIR): DIR holding classification/ and regression/, or one of " +
  "them; optionally convert it first with 'arenalite convert tabfm DIR -o OUT.safetensors'";
/** The error without weights (predictor.py's NO_WEIGHTS). */
export const NO_WEIGHTS = "model 'tabfm' needs a Google TabFM checkpoint: " + WHERE_WEIGHTS;
/** The registry parameters of tabfm that are wrapper options (all but weights). */
export const SETTING_KEYS = Object.freeze(["n_estimators", "softmax_temperature", "average_logits", "random_state",
  "outlier_threshold", "max_num_features", "class_shift"]);
/** The column stages, whose time predictor.py counts in T_embed. */
const EMBED_LAYERS = new Set(["column", "column_2"]);

/** predictor.check_task: an Error when the checkpoint cannot do `task` (its config's is_classifier). */
export function checkTabfmTask(config, task, where) {
  const have = config.is_classifier ? "classification" : "regression";
  if (have !== checkpointTask(task)) {
    throw new Error(`${where} is a Google TabFM ${have} checkpoint; task ${reprString(task)} needs its ` +
      `${checkpointTask(task)} checkpoint`);
  }
}

/** The members' raw outputs ({data, shape: members × m × width}), one member's caches at a time. */
async function memberOutputs(member, inputs, { timer, batchRows, onMember }) {
  const { nTrain: n, width: W, nMembers: M, nTest: m } = inputs;
  const out = new Float32Array(M * m * member.width());
  for (let i = 0; i < M; i++) {
    const x = inputs.memberX(i);
    const context = await member.fitContext(x.subarray(0, n * W), inputs.yTrain.subarray(i * n, (i + 1) * n),
      { timer, d: inputs.d[i], catMask: inputs.catMask[i] });
    const { output } = await member.queryBatches(context, x.subarray(n * W), { batchRows, timer });
    out.set(output, i * m * member.width());
    onMember?.(i + 1, M);
  }
  return { data: out, shape: [M, m, member.width()] };
}

/** Classification: m × C probabilities, 0 for a class absent from the context (predictor.predict). */
function classOutput(proba, plan, d) {
  const C = plan.nClasses;
  const width = d.C || Math.max(...plan.classes) + 1;
  const out = new Float32Array(d.m * width);
  for (let r = 0; r < d.m; r++) {
    for (let k = 0; k < C; k++) out[r * width + plan.classes[k]] = proba[r * C + k];
  }
  return out;
}

/** The timer's layers with the column stages folded into embed (predictor.py's T_fold split). */
function foldColumns(timings, names) {
  const fold = (t) => {
    if (!t) return t;
    const layers = t.layers.filter((_, l) => !EMBED_LAYERS.has(names[l]));
    const embed = t.embed + t.layers.reduce((a, v, l) => a + (EMBED_LAYERS.has(names[l]) ? v : 0), 0);
    return { ...t, embed, layers };
  };
  const out = { ...fold(timings), gpu: fold(timings.gpu) };
  out.layerNames = names.filter((name) => !EMBED_LAYERS.has(name));
  return out;
}

/**
 * `tabfm` on the bridge: `model` checked with the registry's defaults, `model.weights` read
 * (loadTabfmWeights: {config, tensors, shapes, name}, or a folder read once the task is
 * known), `d` validated (Bridge.predict) with `d.nCategorical` (default 0); `model.batchRows`
 * the query batch. Option: `onMember(done, total)` after each member. Resolves to {output,
 * timings (with timings.layerNames), members}.
 */
export async function runTabfm(engine, model, d, { onMember } = {}) {
  if (model.weights === null || model.weights === undefined) throw new Error(NO_WEIGHTS);
  const weights = await tabfmWeightsFor(model.weights, d.task);
  checkTabfmTask(weights.config, d.task, `checkpoint ${reprString(String(weights.name ?? "<bytes>"))}`);
  const settings = settingsFrom(Object.fromEntries(SETTING_KEYS.map((k) => [k, model[k]])));
  const t0 = now();
  const { F, n, m } = d;
  const config = weights.config;
  const plan = fitMembers({ rows: n, cols: F, data: d.xTrain }, d.yTrain, d.task, d.nCategorical ?? 0, settings,
    config.is_classifier ? config.max_classes : null);
  const inputs = memberInputs(plan, { rows: m, cols: F, data: d.xTest });
  const prepMs = now() - t0;
  const member = await TabFMMember.create(engine, weights, { cacheKey: "m0" });
  const timer = member.timer();
  timer.add("embed", prepMs);
  const raw = await memberOutputs(member, inputs, { timer, batchRows: model.batchRows, onMember });
  const t1 = now();
  const output = d.task === "regression" ? aggregateRegression(raw, plan)
    : classOutput(aggregateProba(raw, plan, settings), plan, d);
  timer.add("head", now() - t1);
  const timings = foldColumns(await timer.finish(), member.layerNames());
  return { output, timings, members: plan.nMembers };
}
