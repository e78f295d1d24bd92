// The safetensors layout read from bytes in a page, a worker or Node, as
// pkg/arenalite/models/safetensors.py reads it: an 8-byte little-endian header length N, N
// bytes of JSON (per tensor dtype, shape, data_offsets; "__metadata__" a string map), then
// the buffer. Every entry is checked against the file (keys, dtype, shape, span, truncation,
// overlaps) with Python's messages ("weights file 'name': tensor ... "), the header read as
// Python's json.loads reads it (../py_json.js); F16/F64 widen or round to float32. As in
// Python, `finite: false` keeps NaN and infinite values (TabICL's and TabPFN's checkpoints
// carry them) and the default refuses them. Every checkpoint reader uses this one.

import { PyJsonError, decodeUtf8, isPyInt, loadsPython, pyValueRepr } from "../py_json.js";
import { reprString } from "../py_repr.js";
import { halfToFloat } from "./torch.js";

/** Bytes per element of the dtypes the checked reader converts to float32 (Python's DTYPES). */
const CHECKED_DTYPES = Object.freeze({ F32: 4, F64: 8, F16: 2 });
const MAX_HEADER = 100_000_000;

const asUint8 = (bytes) => (bytes instanceof Uint8Array ? bytes
  : ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : new Uint8Array(bytes));

function checkedEntry(file, tensor, entry, bufferSize, dtypes) {
  const keys = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? Object.keys(entry).sort() : null;
  if (!keys || keys.join() !== "data_offsets,dtype,shape") {
    throw new Error(`${file}: tensor ${reprString(tensor)} must have exactly the keys dtype, shape, ` +
      `data_offsets; got ${pyValueRepr(entry)}`);
  }
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!dtypes.includes(dtype) || !Object.hasOwn(CHECKED_DTYPES, dtype)) {
    const takes = Object.keys(CHECKED_DTYPES).filter((d) => dtypes.includes(d)).sort();
    throw new Error(`${file}: tensor ${reprString(tensor)} has dtype ${pyValueRepr(dtype)}; ` +
      `this reader takes [${takes.map(reprString).join(", ")}]`);
  }
  if (!Array.isArray(shape) || !shape.every((s) => isPyInt(s) && s >= 0)) {
    throw new Error(`${file}: tensor ${reprString(tensor)} has shape ${pyValueRepr(shape)}, ` +
      "not a list of non-negative integers");
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isPyInt) ||
      !(offsets[0] >= 0 && offsets[0] <= offsets[1])) {
    throw new Error(`${file}: tensor ${reprString(tensor)} has data_offsets ${pyValueRepr(offsets)}, ` +
      "not [begin, end] with 0 <= begin <= end");
  }
  const itemsize = CHECKED_DTYPES[dtype];
  const need = itemsize * shape.reduce((a, b) => a * b, 1);
  const [begin, end] = offsets;
  if (end - begin !== need) {
    throw new Error(`${file}: tensor ${reprString(tensor)} spans ${end - begin} bytes but shape ` +
      `${pyValueRepr(shape)} of ${dtype} needs ${need}`);
  }
  if (end > bufferSize) {
    throw new Error(`${file}: tensor ${reprString(tensor)} ends at byte ${end} of a ${bufferSize}-byte ` +
      "buffer (the file is truncated)");
  }
  return { dtype, shape, begin, end };
}

/**
 * The checked header of a safetensors file's bytes (safetensors.py's read_header / _header):
 * {metadata, entries: Map(name → {dtype, shape, begin, end}) in file order, dataStart}.
 * `name` is the file's name in the messages; `dtypes` the dtypes taken.
 */
export function checkedHeader(bytes, name = "<bytes>", { dtypes = Object.keys(CHECKED_DTYPES) } = {}) {
  const data = asUint8(bytes);
  const file = `weights file ${reprString(name)}`;
  const size = data.length;
  if (size < 8) {
    throw new Error(`${file} is ${size} bytes long; a safetensors file starts with an 8-byte header length`);
  }
  const view = new DataView(data.buffer, data.byteOffset, 8);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > Math.min(MAX_HEADER, size - 8)) {
    throw new Error(`${file} declares a ${n}-byte header but holds ${size - 8} bytes after the length ` +
      "(truncated or not safetensors)");
  }
  let header;
  try {
    header = loadsPython(decodeUtf8(data.subarray(8, 8 + n)));
  } catch (error) {
    if (!(error instanceof PyJsonError)) throw error;
    throw new Error(`${file} has a header that is not JSON: ${error.message}`, { cause: error });
  }
  if (header === null || typeof header !== "object" || Array.isArray(header) || header instanceof Number) {
    throw new Error(`${file}: the header must be a JSON object`);
  }
  const metadata = Object.hasOwn(header, "__metadata__") ? header.__metadata__ : {};
  delete header.__metadata__;
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata) ||
      !Object.values(metadata).every((v) => typeof v === "string")) {
    throw new Error(`${file}: '__metadata__' must map strings to strings`);
  }
  const entries = new Map();
  for (const [tensor, entry] of Object.entries(header)) {
    entries.set(tensor, checkedEntry(file, tensor, entry, size - 8 - n, dtypes));
  }
  const spans = [...entries].map(([t, e]) => [e.begin, e.end, t])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  for (let i = 1; i < spans.length; i++) {
    if (spans[i][0] < spans[i - 1][1]) {
      throw new Error(`${file}: tensors ${reprString(spans[i - 1][2])} and ${reprString(spans[i][2])} overlap`);
    }
  }
  return { metadata, entries, dataStart: 8 + n };
}

function tensorData(data, at, entry) {
  const count = (entry.end - entry.begin) / CHECKED_DTYPES[entry.dtype];
  if (entry.dtype === "F32" && (data.byteOffset + at) % 4 === 0) {
    return new Float32Array(data.buffer.slice(data.byteOffset + at, data.byteOffset + at + 4 * count));
  }
  const view = new DataView(data.buffer, data.byteOffset + at, entry.end - entry.begin);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    out[i] = entry.dtype === "F32" ? view.getFloat32(4 * i, true)
      : entry.dtype === "F64" ? view.getFloat64(8 * i, true) : halfToFloat(view.getUint16(2 * i, true));
  }
  return out;
}

/**
 * {metadata, tensors: Map(name → Float32Array), shapes: Map(name → number[])} of a
 * safetensors file's bytes (safetensors.py's parse): the checked header, then each tensor
 * as float32, in file order; `finite` (default) refuses a tensor holding NaN or ±inf.
 */
export function readSafetensors(bytes, name = "<bytes>", { finite = true, dtypes = Object.keys(CHECKED_DTYPES) } = {}) {
  const data = asUint8(bytes);
  const { metadata, entries, dataStart } = checkedHeader(data, name, { dtypes });
  const tensors = new Map();
  const shapes = new Map();
  for (const [tensor, entry] of entries) {
    const values = tensorData(data, dataStart + entry.begin, entry);
    if (finite && !values.every(Number.isFinite)) {
      throw new Error(`weights file ${reprString(name)}: tensor ${reprString(tensor)} has non-finite values`);
    }
    tensors.set(tensor, values);
    shapes.set(tensor, entry.shape);
  }
  return { metadata, tensors, shapes };
}

/** Keys of a flat JSON object whose numbers are written as floats (a '.' or an exponent). */
export function jsonFloatKeys(text) {
  const floats = new Set();
  for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g)) {
    if (/[.eE]/.test(m[2])) floats.add(m[1]);
  }
  return floats;
}
