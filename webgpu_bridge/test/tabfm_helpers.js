// Test helpers for Google TabFM on WebGPU (Node only): a checkpoint folder's config.json +
// model.safetensors read into the member's weights object ({config, tensors, shapes,
// name}, as src/tabfm/checkpoint.js's loader gives it), and a committed stage fixture.
import { readFileSync } from "node:fs";
import { parseSafetensors } from "../src/safetensors.js";
import { readNpz } from "./npz.js";

export const DATA = new URL("../../tests/data/tabfm/", import.meta.url);

/** {config, tensors, shapes, name} of a folder holding config.json + model.safetensors. */
export function readFolder(path) {
  const dir = path.endsWith("/") ? path : `${path}/`;
  const config = JSON.parse(readFileSync(`${dir}config.json`, "utf8"));
  const bytes = readFileSync(`${dir}model.safetensors`);
  const { tensors, shapes } = parseSafetensors(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    `${dir}model.safetensors`);
  return { config, tensors, shapes, name: dir };
}

/** The fixture checkpoint of a stages.json case: "small" (by task) or "wide". */
export function fixtureWeights(entry) {
  const sub = entry.checkpoint === "small" ? `small/${entry.task}/` : `${entry.checkpoint}/`;
  return readFolder(new URL(sub, DATA).pathname);
}

/** A committed stage fixture: inputs (context/query split) and the numpy stages. */
export function stageFixture(name, index) {
  const entry = index[name];
  const z = readNpz(new URL(`stages_${name}.npz`, DATA).pathname);
  const x = z.get("x");
  const H = x.shape[1];
  const N = entry.context;
  const yz = z.get("y").data;
  const yTrain = Float64Array.from(yz, Number);
  const catMask = Array.from(z.get("cat_mask").data, Boolean);
  return { entry, z, N, H, d: Number(z.get("d").data[0]), catMask, xTrain: x.data.subarray(0, N * H),
    xTest: x.data.subarray(N * H), yTrain };
}
