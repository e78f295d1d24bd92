// Test helpers for the TabICL checkpoint reader: zip archives written in JavaScript (stored or
// DEFLATE records), pickles spelled in protocol-2 opcodes (as tests/test_tabicl_checkpoint.py
// spells them: nothing is pickled, let alone run), hand-built checkpoints, a safetensors writer.

import { crc32 } from "../src/checkpoint/zip.js";

const enc = new TextEncoder();

export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

async function deflateRaw(data) {
  const stream = new Blob([data]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A zip of `records` ([name, bytes] pairs, in order); `deflate` compresses every record. */
export async function writeZip(records, { deflate = false } = {}) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, raw] of records) {
    const data = typeof raw === "string" ? enc.encode(raw) : raw;
    const body = deflate ? await deflateRaw(data) : data;
    const nameBytes = enc.encode(name);
    const head = new DataView(new ArrayBuffer(30));
    head.setUint32(0, 0x04034b50, true);
    head.setUint16(4, 20, true);
    head.setUint16(8, deflate ? 8 : 0, true);
    head.setUint32(14, crc32(data), true);
    head.setUint32(18, body.length, true);
    head.setUint32(22, data.length, true);
    head.setUint16(26, nameBytes.length, true);
    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, 20, true);
    central.setUint16(6, 20, true);
    central.setUint16(10, deflate ? 8 : 0, true);
    central.setUint32(16, crc32(data), true);
    central.setUint32(20, body.length, true);
    central.setUint32(24, data.length, true);
    central.setUint16(28, nameBytes.length, true);
    central.setUint32(42, offset, true);
    locals.push(new Uint8Array(head.buffer), nameBytes, body);
    centrals.push(new Uint8Array(central.buffer), nameBytes);
    offset += 30 + nameBytes.length + body.length;
  }
  const cd = concat(centrals);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, records.length, true);
  end.setUint16(10, records.length, true);
  end.setUint32(12, cd.length, true);
  end.setUint32(16, offset, true);
  return concat([...locals, cd, new Uint8Array(end.buffer)]);
}

// --- pickles spelled in opcodes -------------------------------------------------------------

export class Raw { constructor(bytes) { this.bytes = bytes instanceof Uint8Array ? bytes : enc.encode(bytes); } }
export class Tuple { constructor(items) { this.items = items; } }
export class Float { constructor(value) { this.value = value; } }
export class OrderedDict { constructor(entries) { this.entries = entries; } }

export const tuple = (...items) => new Tuple(items);
export const raw = (...parts) => new Raw(concat(parts.map((p) => (p instanceof Raw ? p.bytes : typeof p === "string" ? enc.encode(p) : p))));
export const glob = (module, name) => raw(`c${module}\n${name}\n`);

function int32(v) { const b = new DataView(new ArrayBuffer(4)); b.setInt32(0, v, true); return new Uint8Array(b.buffer); }
function u32(v) { const b = new DataView(new ArrayBuffer(4)); b.setUint32(0, v, true); return new Uint8Array(b.buffer); }

/** Protocol-2 opcodes that rebuild `obj` (null, booleans, ints, Float, strings, Tuple, arrays as lists, objects as dicts, OrderedDict, Raw). */
export function pkl(obj) {
  if (obj instanceof Raw) return obj.bytes;
  if (obj === null) return enc.encode("N");
  if (typeof obj === "boolean") return Uint8Array.of(obj ? 0x88 : 0x89);
  if (typeof obj === "number" && Number.isInteger(obj) && Math.abs(obj) < 2 ** 31) return concat([enc.encode("J"), int32(obj)]);
  if (typeof obj === "number" && Number.isInteger(obj)) {
    let v = BigInt(obj);
    const bytes = [];
    while (v > 0n || (bytes.length && bytes[bytes.length - 1] & 0x80)) { bytes.push(Number(v & 0xffn)); v >>= 8n; }
    return concat([Uint8Array.of(0x8a, bytes.length), Uint8Array.from(bytes)]);
  }
  if (typeof obj === "number" || obj instanceof Float) {
    const b = new DataView(new ArrayBuffer(9));
    b.setUint8(0, 0x47);
    b.setFloat64(1, obj instanceof Float ? obj.value : obj, false);
    return new Uint8Array(b.buffer);
  }
  if (typeof obj === "string") { const s = enc.encode(obj); return concat([enc.encode("X"), u32(s.length), s]); }
  if (obj instanceof Tuple) return concat([enc.encode("("), ...obj.items.map(pkl), enc.encode("t")]);
  if (Array.isArray(obj)) return concat([enc.encode("]("), ...obj.map(pkl), enc.encode("e")]);
  const entries = obj instanceof OrderedDict ? obj.entries : Object.entries(obj);
  const head = obj instanceof OrderedDict ? concat([glob("collections", "OrderedDict").bytes, enc.encode(")R")]) : enc.encode("}");
  return concat([head, enc.encode("("), ...entries.flatMap(([k, v]) => [pkl(k), pkl(v)]), enc.encode("u")]);
}

/** torch._utils._rebuild_tensor_v2 of storage `key`, as torch.save writes it. */
export function tensor(key, numel, offset, size, stride, storage = "FloatStorage") {
  const pid = raw("(", pkl("storage"), glob("torch", storage), pkl(key), pkl("cpu"), pkl(numel), "tQ");
  const args = raw("(", pid, pkl(offset), pkl(new Tuple(size)), pkl(new Tuple(stride)), pkl(false),
    glob("collections", "OrderedDict"), ")Rt");
  return raw(glob("torch._utils", "_rebuild_tensor_v2"), args, "R");
}

export function parameter(t) {
  return raw(glob("torch._utils", "_rebuild_parameter"), "(", t, pkl(true), glob("collections", "OrderedDict"), ")RtR");
}

export function writeCheckpoint(dataPkl, records = [], { byteorder = "little", prefix = "archive/", deflate = false } = {}) {
  const entries = [[`${prefix}data.pkl`, concat([dataPkl, enc.encode(".")])]];
  if (byteorder !== null) entries.push([`${prefix}byteorder`, byteorder]);
  for (const [key, bytes] of records) entries.push([`${prefix}data/${key}`, bytes]);
  return writeZip(entries, { deflate });
}

const f32Bytes = (data) => new Uint8Array(Float32Array.from(data).buffer);

/**
 * A checkpoint of `tensors` (Map name → {data, shape}; one storage each, contiguous), no
 * torch involved; `edit(name, fields)` may change [key, numel, offset, size, stride].
 */
export function handBuilt(config, tensors, { edit, extra = {}, parameters = false } = {}) {
  const state = [];
  const records = [];
  let i = 0;
  for (const [name, { data, shape }] of tensors) {
    const stride = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
    const fields = [String(i), data.length, 0, shape, stride];
    if (edit) edit(name, fields);
    const t = tensor(...fields);
    state.push([name, parameters ? parameter(t) : t]);
    records.push([String(i), f32Bytes(data)]);
    i += 1;
  }
  return writeCheckpoint(pkl({ config, state_dict: new OrderedDict(state), ...extra }), records);
}

/** A safetensors file of float32 `tensors` (Map name → {data, shape}) and string `metadata`. */
export function writeSafetensors(tensors, metadata = null) {
  const header = {};
  const blobs = [];
  let offset = 0;
  for (const [name, { data, shape }] of [...tensors].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const bytes = f32Bytes(data);
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + bytes.length] };
    blobs.push(bytes);
    offset += bytes.length;
  }
  if (metadata) header.__metadata__ = metadata;
  const text = enc.encode(JSON.stringify(header));
  const length = new DataView(new ArrayBuffer(8));
  length.setUint32(0, text.length, true);
  return concat([new Uint8Array(length.buffer), text, ...blobs]);
}
