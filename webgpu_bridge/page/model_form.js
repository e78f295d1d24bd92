// The page's model choices, generated from the registry (pure: no DOM, no imports, so
// Node tests it from the repository; app.js passes the bridge's registry and checkModel):
// which inputs each model gets, and the model object a filled-in form stands for.

/**
 * Input attributes of parameter `key` of a registry entry (a boolean: a checkbox, ticked
 * when its default is true); null for a weights parameter.
 */
export function paramInput(entry, key) {
  const spec = entry.params[key];
  if (spec.type === "weights") return null;
  if (spec.type === "boolean") {
    const box = { type: "checkbox", id: `${entry.name}-${key}` };
    if (spec.default === true) box.checked = "";
    if (spec.help) box["aria-describedby"] = `${box.id}-help`;
    return box;
  }
  const max = Math.min(spec.max ?? Infinity, spec.max_webgpu ?? Infinity);
  const attrs = { type: "number", id: `${entry.name}-${key}`, step: spec.type === "integer" ? "1" : "any" };
  if (spec.min !== undefined || spec.exclusive_min !== undefined) attrs.min = String(spec.min ?? spec.exclusive_min);
  if (Number.isFinite(max)) attrs.max = String(max);
  if (spec.default !== null) attrs.value = String(spec.default);
  if (spec.nullable) attrs.placeholder = "default";
  else attrs.required = "";
  if (spec.help) attrs["aria-describedby"] = `${attrs.id}-help`;
  return attrs;
}

/**
 * The model object of registry entry `entry` from its inputs' texts ({key: text}, one per
 * input; a key the registry does not list is passed on, so checkModel rejects it): an
 * empty text is null (the default of a nullable parameter), a weights parameter is null
 * (the default weights), a boolean's text is its checkbox's state ("true" or "false").
 * Checked by `checkModel` (the bridge's): its message on error.
 */
export function modelFromInputs(entry, texts, batchRows, checkModel) {
  const { params } = entry;
  const model = { name: entry.name };
  for (const [key, value] of Object.entries(texts)) {
    const text = String(value ?? "").trim();
    const type = params[key]?.type;
    model[key] = type === "weights" || text === "" ? null
      : type === "boolean" && (text === "true" || text === "false") ? text === "true" : Number(text);
  }
  return { ...checkModel(model), batchRows };
}
