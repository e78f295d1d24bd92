// The in-context models' names, default parameters and results-table labels, shared by
// the device layer (bridge.js) and the orchestration layer (runner.js).

export const MODELS = ["knn", "attention", "icl_transformer"];

const DEFAULTS = { knn: { k: 5 }, attention: { temperature: null }, icl_transformer: { weights: null } };

/**
 * A model's name in the results table, as arenalite.models.model_label gives it: its
 * `label`, else the name plus non-default parameters, e.g. "knn(k=3)". (A Python float
 * such as 2.0 prints as "2" here; pass `label` to pin the name across runners.)
 */
export function modelLabel(model) {
  if (model.label !== undefined) {
    if (typeof model.label !== "string" || !model.label) {
      throw new TypeError(`model 'label' must be a non-empty string, got ${JSON.stringify(model.label)}`);
    }
    return model.label;
  }
  const defaults = DEFAULTS[model.name];
  if (!defaults) throw new RangeError(`unknown model name ${JSON.stringify(model.name)}`);
  const changed = Object.keys(defaults)
    .filter((k) => model[k] !== undefined && model[k] !== defaults[k])
    .map((k) => `${k}=${typeof model[k] === "object" ? "<object>" : model[k]}`);
  return model.name + (changed.length ? `(${changed.join(", ")})` : "");
}
