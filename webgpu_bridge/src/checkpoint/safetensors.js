// The safetensors layout read from bytes in a page, a worker or Node, as
// pkg/arenalite/models/safetensors.py reads it: an 8-byte little-endian header length N, N
// bytes of JSON (per tensor dtype, shape, data_offsets; "__metadata__" a string map), then
// the buffer. Every entry is checked against the file (dtype, shape, span, truncation,
// overlaps) with Python's messages ("weights file 'name': ..."); F16/F64 widen or round to
// float32; non-finite values are kept (checkpoints carry them; callers check what they must).

import { PyDict, PyFloat, pyRepr } from "./pickle.js";
import { halfToFloat } from "./torch.js";

const ST_DTYPES = { F32: 4, F64: 8, F16: 2 };
const MAX_HEADER = 100_000_000;

/** Python's repr of a parsed JSON value (objects as dicts, non-integral numbers as floats). */
function jsonRepr(value) {
  const py = (v) => {
    if (Array.isArray(v)) return v.map(py);
    if (typeof v === "number" && !Number.isInteger(v)) return new PyFloat(v);
    if (v !== null && typeof v === "object") {
      const d = new PyDict();
      for (const [k, x] of Object.entries(v)) d.set(k, py(x));
      return d;
    }
    return v;
  };
  return pyRepr(py(value));
}

function entryTensor(file, tensor, entry, buffer) {
  const keys = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? Object.keys(entry).sort() : null;
  if (!keys || keys.join() !== "data_offsets,dtype,shape") {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} must have exactly the keys dtype, shape, data_offsets; got ${jsonRepr(entry)}`);
  }
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!Object.hasOwn(ST_DTYPES, dtype)) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has dtype ${jsonRepr(dtype)}; this reader takes ['F16', 'F32', 'F64']`);
  }
  if (!Array.isArray(shape) || !shape.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has shape ${jsonRepr(shape)}, not a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(Number.isInteger) || !(offsets[0] >= 0 && offsets[0] <= offsets[1])) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has data_offsets ${jsonRepr(offsets)}, not [begin, end] with 0 <= begin <= end`);
  }
  const itemsize = ST_DTYPES[dtype];
  const count = shape.reduce((a, b) => a * b, 1);
  const [begin, end] = offsets;
  if (end - begin !== itemsize * count) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} spans ${end - begin} bytes but shape [${shape.join(", ")}] of ${dtype} needs ${itemsize * count}`);
  }
  if (end > buffer.length) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} ends at byte ${end} of a ${buffer.length}-byte buffer (the file is truncated)`);
  }
  const view = new DataView(buffer.buffer, buffer.byteOffset + begin, end - begin);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    data[i] = dtype === "F32" ? view.getFloat32(4 * i, true) : dtype === "F64" ? view.getFloat64(8 * i, true)
      : halfToFloat(view.getUint16(2 * i, true));
  }
  return { data, shape, begin, end };
}

function header(bytes, file) {
  if (bytes.length < 8) {
    throw new Error(`${file} is ${bytes.length} bytes long; a safetensors file starts with an 8-byte header length`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > Math.min(MAX_HEADER, bytes.length - 8)) {
    throw new Error(`${file} declares a ${n}-byte header but holds ${bytes.length - 8} bytes after the length (truncated or not safetensors)`);
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (error) {
    throw new Error(`${file} has a header that is not JSON: ${error.message}`, { cause: error });
  }
  if (header === null || typeof header !== "object" || Array.isArray(header)) throw new Error(`${file}: the header must be a JSON object`);
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  if (typeof metadata !== "object" || Array.isArray(metadata) || !Object.values(metadata).every((v) => typeof v === "string")) {
    throw new Error(`${file}: '__metadata__' must map strings to strings`);
  }
  return { header, metadata, buffer: bytes.subarray(8 + n) };
}

/** Keys of a flat JSON object whose numbers are written as floats (a '.' or an exponent). */
export function jsonFloatKeys(text) {
  const floats = new Set();
  for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g)) {
    if (/[.eE]/.test(m[2])) floats.add(m[1]);
  }
  return floats;
}

/**
 * {metadata, metadataText, tensors: Map(name → Float32Array), shapes: Map(name → number[])}
 * of a safetensors file's bytes (a Uint8Array), tensors in file order; `name` is the file's
 * name in the messages.
 */
export function readSafetensors(bytes, name = "<bytes>") {
  const file = `weights file ${pyRepr(name)}`;
  const { header: entries, metadata, buffer } = header(bytes, file);
  const tensors = new Map();
  const shapes = new Map();
  const spans = [];
  for (const [tensor, entry] of Object.entries(entries)) {
    const { data, shape, begin, end } = entryTensor(file, tensor, entry, buffer);
    tensors.set(tensor, data);
    shapes.set(tensor, shape);
    spans.push([begin, end, tensor]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : 1));
  for (let i = 1; i < spans.length; i++) {
    if (spans[i][0] < spans[i - 1][1]) throw new Error(`${file}: tensors ${pyRepr(spans[i - 1][2])} and ${pyRepr(spans[i][2])} overlap`);
  }
  return { metadata, tensors, shapes };
}
