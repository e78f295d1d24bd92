// numpy's .npy and .npz files read from bytes (the fixtures of tests/data/tabicl/): the
// "\x93NUMPY" header (versions 1–3) with its descr, fortran_order and shape, C-ordered data
// of little- or big-endian floats and integers, booleans and fixed-width unicode strings.
// An .npz is a zip of .npy records (stored or DEFLATE, ../checkpoint/zip.js).

import { ZipArchive, asBytes } from "../checkpoint/zip.js";

const KINDS = {
  f8: (v, at, le) => v.getFloat64(at, le), f4: (v, at, le) => v.getFloat32(at, le),
  i8: (v, at, le) => Number(v.getBigInt64(at, le)), u8: (v, at, le) => Number(v.getBigUint64(at, le)),
  i4: (v, at, le) => v.getInt32(at, le), u4: (v, at, le) => v.getUint32(at, le),
  i2: (v, at, le) => v.getInt16(at, le), u2: (v, at, le) => v.getUint16(at, le),
  i1: (v, at) => v.getInt8(at), u1: (v, at) => v.getUint8(at), b1: (v, at) => v.getUint8(at) !== 0,
};
const ARRAYS = { f8: Float64Array, f4: Float32Array, i4: Int32Array, u4: Uint32Array, i2: Int16Array, u2: Uint16Array, i1: Int8Array, u1: Uint8Array };

function header(bytes, name) {
  const magic = String.fromCharCode(...bytes.subarray(0, 6));
  if (magic !== "\x93NUMPY") throw new Error(`${name}: not a .npy file (no \\x93NUMPY magic)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6];
  const length = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const text = new TextDecoder().decode(bytes.subarray(start, start + length));
  const descr = /'descr':\s*'([^']*)'/.exec(text)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(text)?.[1] === "True";
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(text)?.[1];
  if (!descr || shapeText === undefined) throw new Error(`${name}: unreadable .npy header ${JSON.stringify(text)}`);
  const shape = shapeText.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  return { descr, fortran, shape, offset: start + length, view };
}

/** {dtype, shape, data} of a .npy file: data a typed array (floats, ≤32-bit ints), an Array (int64, bool), or strings. */
export function parseNpy(input, name = "array") {
  const bytes = asBytes(input);
  const { descr, fortran, shape, offset, view } = header(bytes, name);
  if (fortran) throw new Error(`${name}: Fortran-ordered arrays are not read`);
  const count = shape.reduce((a, b) => a * b, 1);
  const little = descr[0] !== ">";
  const kind = descr.slice(1);
  if (kind[0] === "U") {
    const width = Number(kind.slice(1));
    const data = [];
    for (let i = 0; i < count; i++) {
      let s = "";
      for (let c = 0; c < width; c++) {
        const code = view.getUint32(offset + 4 * (i * width + c), little);
        if (code) s += String.fromCodePoint(code);
      }
      data.push(s);
    }
    return { dtype: descr, shape, data };
  }
  const get = KINDS[kind];
  if (!get) throw new Error(`${name}: dtype ${descr} is not read`);
  const size = Number(kind.slice(1));
  const data = ARRAYS[kind] ? new ARRAYS[kind](count) : new Array(count);
  for (let i = 0; i < count; i++) data[i] = get(view, offset + size * i, little);
  return { dtype: descr, shape, data };
}

/** The arrays of an .npz file: Map(name without ".npy" → parseNpy's object). */
export async function parseNpz(input, name = "archive") {
  const archive = new ZipArchive(asBytes(input));
  const out = new Map();
  for (const entry of archive.names) {
    if (!entry.endsWith(".npy")) continue;
    out.set(entry.slice(0, -4), parseNpy(await archive.read(entry), `${name}:${entry}`));
  }
  return out;
}
