// arenalite WebGPU bridge: in-context tabular models in WGSL, timed per stage, and a
// runner on persisted splits. Plain ES modules: page, Web Worker and Node (`webgpu`).
export { Bridge, IMPLEMENTATIONS, parameterCount } from "./bridge.js";
export { KNN_MAX_K } from "./distance_models.js";
export { COMMON_KEYS, ELSEWHERE, MODELS, REGISTRY, checkLimits, checkModel, checkTask, modelEntry, modelLabel } from "./models.js";
export { runSplits, datasetMatrix } from "./runner.js";
export { parseSplits } from "./splits.js";
export { RESULT_COLUMNS, resultRow } from "./results.js";
export { TIE_TOLERANCE, mergeNearTies, rocAuc, logLoss, rmse, taskScore } from "./metrics.js";
export { loadWeights, parseWeights, expectedShapes, sha256Hex } from "./weights.js";
export { validateData, columnStats, standardize, targetStats } from "./data.js";
export { describeAdapter } from "./gpu.js";
export { KERNELS, LINEAR_TILE, loadKernel } from "./kernels.js";
export { Operators } from "./operators.js";
export { contextRows, fmShapes, loadFmWeights, rowHash, runTabularFM } from "./tabular_fm.js";
export { parseSafetensors } from "./safetensors.js";
// TabICL without Python: checkpoints (.ckpt through a restricted unpickler, or safetensors), preprocessing, ensemble
export { CONFIG_DEFAULTS as TABICL_CONFIG_DEFAULTS, checkConfig as checkTabiclConfig, expectedShapes as tabiclExpectedShapes, readCheckpoint as readTabiclCheckpoint } from "./tabicl/checkpoint.js";
export { aggregateProba as tabiclAggregateProba, fitMembers as fitTabiclMembers, memberInputs as tabiclMemberInputs, modelBatches as tabiclModelBatches, predictRegression as tabiclPredictRegression } from "./tabicl/ensemble.js";
export { PyRandom } from "./tabicl/pyrandom.js";
export { TabICLMember, loadTabiclWeights } from "./tabicl/model.js";
export { NO_WEIGHTS as TABICL_NO_WEIGHTS, checkTabiclTask, runTabicl } from "./tabicl/predictor.js";
// TabPFN v3 and Google TabFM without Python: checkpoints, members, predictors
export { loadTabfmWeights, tabfmWeightsFor } from "./tabfm/checkpoint.js";
export { TabFMMember } from "./tabfm/model.js";
export { NO_WEIGHTS as TABFM_NO_WEIGHTS, checkTabfmTask, runTabfm } from "./tabfm/predictor.js";
export { loadTabpfnWeights } from "./tabpfn/checkpoint.js";
export { TabPFNMember } from "./tabpfn/model.js";
export { NO_WEIGHTS as TABPFN_NO_WEIGHTS, checkTabpfnTask, runTabpfn } from "./tabpfn/predictor.js";
