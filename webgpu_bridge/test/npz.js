// A small .npz reader for the tests (Node only): the zip's central directory, entries
// stored or deflated (zlib's raw inflate), each a .npy (format 1.0 – 3.0, C order,
// little-endian <f4 <f8 <i4 <i8 <u1 |b1). readNpz(path) → Map(name → {dtype, shape, data}).
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";

const TYPES = { "<f4": Float32Array, "<f8": Float64Array, "<i4": Int32Array, "<i8": BigInt64Array,
  "|u1": Uint8Array, "<u1": Uint8Array, "|b1": Uint8Array };

/** {dtype, shape, data} of a .npy file's bytes (a Buffer). */
export function parseNpy(buf, name = "array") {
  if (buf.readUInt32BE(0) !== 0x934e554d || buf.toString("latin1", 4, 6) !== "PY") {
    throw new Error(`${name}: not a .npy file`);
  }
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !fortran || shapeText === undefined) throw new Error(`${name}: bad .npy header ${header}`);
  if (fortran === "True") throw new Error(`${name}: Fortran-order arrays are not supported`);
  const Type = TYPES[descr];
  if (!Type) throw new Error(`${name}: dtype ${descr} is not supported`);
  const shape = shapeText.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const at = start + headerLen;
  const bytes = buf.subarray(at, at + count * Type.BYTES_PER_ELEMENT);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return { dtype: descr, shape, data: new Type(copy.buffer, 0, count) };
}

/** Every array of an .npz file, by name (without ".npy"). */
export function readNpz(path) {
  const buf = readFileSync(path);
  let end = buf.length - 22;
  while (end >= 0 && buf.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error(`${path}: no zip end-of-central-directory record`);
  const entries = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const out = new Map();
  for (let i = 0; i < entries; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${path}: bad central directory`);
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString("utf8", at + 46, at + 46 + nameLen);
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataAt, dataAt + compressed);
    if (method !== 0 && method !== 8) throw new Error(`${path}: ${name} uses zip method ${method}`);
    const file = method === 8 ? inflateRawSync(raw) : raw;
    out.set(name.replace(/\.npy$/, ""), parseNpy(file, `${path}:${name}`));
    at += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}
