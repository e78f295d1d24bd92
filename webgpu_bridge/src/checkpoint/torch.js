// torch.save files (torch 1.6 and later: a zip) read in a page, a worker or Node without
// Python or torch: <archive>/data.pkl through the restricted pickle interpreter of ./pickle.js,
// which resolves only ALLOWED and refuses every other class by name before anything is built;
// each tensor a torch._utils._rebuild_tensor_v2 of a storage record <archive>/data/<key>,
// read only when it is the state dict's. The JavaScript twin of
// pkg/arenalite/models/torch_checkpoint.py (its messages word for word); shared by the TabICL
// and TabPFN checkpoint readers. `model` names the checkpoint's kind in the messages.

import { PyCallable, PyDict, PyFloat, PySet, PyTuple, PickleError, Refused, iterate, pyRepr, typeName, unpickle } from "./pickle.js";
import { ZipArchive, ZipError } from "./zip.js";

export { Refused };
/** Largest data.pkl read (bytes). */
export const MAX_PICKLE = 2 ** 28;
/** torch's typed storage classes → [element type, bytes per element]. */
const STORAGES = {
  FloatStorage: ["f4", 4], HalfStorage: ["f2", 2], BFloat16Storage: ["bf16", 2], DoubleStorage: ["f8", 8],
  LongStorage: ["i8", 8], IntStorage: ["i4", 4], ShortStorage: ["i2", 2], CharStorage: ["i1", 1],
  ByteStorage: ["u1", 1], BoolStorage: ["b1", 1],
};
const FLOAT_STORAGES = ["FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage"];
/** Every [module, name] the unpickler resolves; anything else is refused. */
export const ALLOWED = Object.freeze([
  ["torch._utils", "_rebuild_tensor_v2"], ["torch._utils", "_rebuild_tensor"],
  ["torch._utils", "_rebuild_parameter"], ["torch._utils", "_rebuild_parameter_with_state"],
  ["collections", "OrderedDict"], ["torch", "Size"], ["builtins", "set"], ["builtins", "frozenset"],
  ...Object.keys(STORAGES).map((name) => ["torch", name]),
]);


export const listRepr = (items) => `[${items.map(pyRepr).join(", ")}]`;

/** `names` for a message: the first `limit` quoted, then how many more. */
export function few(names, limit = 8) {
  const shown = names.slice(0, limit).map(pyRepr).join(", ");
  return `[${shown}${names.length > limit ? `, … ${names.length - limit} more` : ""}]`;
}

/**
 * "zip" or "safetensors", told by the first bytes (not the name); a bare pickle (torch's
 * legacy format) and anything else throw an Error starting with `where`.
 */
export function sniff(bytes, where) {
  const head = bytes.subarray(0, 16);
  const magic = String.fromCharCode(...head.subarray(0, 4));
  if (magic === "PK\x03\x04" || magic === "PK\x05\x06") return "zip";
  if (head.length >= 9 && head[8] === 0x7b) return "safetensors";
  if (head[0] === 0x80) {
    throw new Error(`${where} is a bare pickle (torch's legacy format, before torch 1.6, or not torch's at all), ` +
      "which is not read; torch.save of torch 1.6 or later writes the zip format read here");
  }
  throw new Error(`${where} is neither a torch checkpoint (a zip archive holding data.pkl) nor a safetensors file`);
}

// --- the restricted unpickler's records and globals ---------------------------------------

class StorageType {
  static pyName = "_StorageType";
  constructor(name) { this.name = name; }
  repr() { return `_StorageType(name=${pyRepr(this.name)})`; }
}

class Storage {
  static pyName = "_Storage";
  constructor(kind, key, numel) { this.kind = kind; this.key = key; this.numel = numel; }
  same(other) { return this.kind === other.kind && this.key === other.key && this.numel === other.numel; }
  repr() { return `_Storage(kind=${pyRepr(this.kind)}, key=${pyRepr(this.key)}, numel=${this.numel})`; }
}

class TensorRef {
  static pyName = "_TensorRef";
  constructor(storage, offset, size, stride) { Object.assign(this, { storage, offset, size, stride }); }
  repr() {
    return `_TensorRef(storage=${this.storage.repr()}, offset=${this.offset}, size=${pyRepr(new PyTuple(this.size))}, ` +
      `stride=${pyRepr(new PyTuple(this.stride))})`;
  }
}

const isInt = (v) => typeof v === "number" || typeof v === "bigint";

function indexTuple(value, what) {
  if (Array.isArray(value)) value = new PyTuple(value);
  if (!(value instanceof PyTuple) || !value.items.every((v) => isInt(v) && v >= 0)) {
    throw new Refused(`has a tensor whose ${what} is ${pyRepr(value)}, not a tuple of non-negative integers`);
  }
  return value.items.map(Number);
}

function rebuildTensor([storage = null, offset = null, size = null, stride = null]) {
  if (!(storage instanceof Storage)) throw new Refused(`has a tensor built on a ${typeName(storage)}, not a saved storage`);
  if (!isInt(offset) || offset < 0) throw new Refused(`has a tensor whose storage offset is ${pyRepr(offset)}`);
  const dims = indexTuple(size, "size");
  const steps = indexTuple(stride, "stride");
  if (dims.length !== steps.length) throw new Refused(`has a tensor of size [${dims.join(", ")}] but stride [${steps.join(", ")}]`);
  return new TensorRef(storage, Number(offset), dims, steps);
}

function rebuildParameter([data = null]) {
  if (!(data instanceof TensorRef)) throw new Refused(`has a parameter wrapping a ${typeName(data)}, not a tensor`);
  return data;
}

function orderedDict(args, { newOnly = false } = {}) {
  const d = new PyDict("OrderedDict");
  if (args.length > 1) throw new PickleError(`TypeError: expected at most 1 arguments, got ${args.length}`);
  if (newOnly || !args.length) return d;
  if (args[0] instanceof PyDict) {
    for (const [k, v] of args[0].entries()) d.set(k, v);
    return d;
  }
  for (const pair of iterate(args[0])) {
    const kv = iterate(pair);
    if (kv.length !== 2) throw new PickleError("ValueError: need 2 items to unpack an OrderedDict pair");
    d.set(kv[0], kv[1]);
  }
  return d;
}

function pySet(kind) {
  return (args, { newOnly = false } = {}) => {
    if (args.length > 1) throw new PickleError(`TypeError: ${kind} expected at most 1 argument, got ${args.length}`);
    const s = new PySet([], kind);
    if ((newOnly && kind === "set") || !args.length) return s;
    const seen = new Set();
    for (const item of iterate(args[0])) {
      const h = pyRepr(item);
      if (!seen.has(h)) { seen.add(h); s.items.push(item); }
    }
    return s;
  };
}

const FUNCTIONS = {
  _rebuild_tensor_v2: rebuildTensor, _rebuild_tensor: rebuildTensor,
  _rebuild_parameter: rebuildParameter, _rebuild_parameter_with_state: rebuildParameter,
};

function findClass(model, rawModule, name) {
  const module = rawModule === "__builtin__" ? "builtins" : rawModule;
  if (!ALLOWED.some(([m, n]) => m === module && n === name)) {
    throw new Refused(`refers to class ${pyRepr(`${module}.${name}`)}, which a ${model} checkpoint never contains; refusing to load it`);
  }
  if (module === "torch._utils") return new PyCallable(name, FUNCTIONS[name]);
  if (module === "collections") return new PyCallable(name, orderedDict, true);
  if (name === "Size") return new PyCallable(name, (args) => new PyTuple(args.length ? [...iterate(args[0])] : []), true);
  if (module === "builtins") return new PyCallable(name, pySet(name), true);
  return new StorageType(name);
}

function persistentLoad(pid) {
  const items = pid instanceof PyTuple ? pid.items : null;
  if (!items || items.length !== 5 || items[0] !== "storage" || !(items[1] instanceof StorageType) ||
      typeof items[2] !== "string" || !isInt(items[4]) || items[4] < 0) {
    throw new Refused(`has a persistent id ${pyRepr(pid)} that is not a torch storage record`);
  }
  return new Storage(items[1].name, items[2], Number(items[4]));
}

function buildState(inst, state) {
  if (inst instanceof StorageType || inst instanceof Storage || inst instanceof TensorRef) {
    throw new Refused(`sets the state of a ${inst.constructor.pyName.replace(/^_+|_+$/g, "")} record, which torch.save never does`);
  }
  if (!(inst instanceof PyDict) || inst.typeName !== "OrderedDict") {
    throw new PickleError(`AttributeError: '${typeName(inst)}' object has no attribute '__dict__'`);
  }
  const parts = state instanceof PyTuple && state.items.length === 2 ? state.items : [state, null];
  for (const part of parts) {
    if (part !== null && !(part instanceof PyDict)) {
      throw new PickleError(`AttributeError: '${typeName(part)}' object has no attribute 'items'`);
    }
  }
  inst.attributes = parts;  // an OrderedDict's attributes (a state dict's _metadata): kept, unused
}

/** A pickled value as plain JavaScript: dicts → objects (keys as str() makes them), tuples,
 * lists and sets → arrays, floats → numbers. */
export function plain(v) {
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof PyTuple || v instanceof PySet) return v.items.map(plain);
  if (v instanceof PyDict) return Object.fromEntries(v.entries().map(([k, x]) => [typeof k === "string" ? k : pyRepr(k), plain(x)]));
  return v;
}

/** A pickled config (a PyDict) as a plain object, and which keys held Python floats. */
export function configFrom(value) {
  if (!(value instanceof PyDict)) return { config: value, floats: new Set() };
  const config = {};
  const floats = new Set();
  for (const [k, v] of value.entries()) {
    const key = typeof k === "string" ? k : pyRepr(k);
    if (v instanceof PyFloat) floats.add(key);
    config[key] = plain(v);
  }
  return { config, floats };
}

/**
 * Read a torch.save zip: resolves to {obj (the unpickled PyDict), tensors (Map name →
 * Float32Array, C order, in the state dict's order), shapes (Map name → number[])}. The
 * object must be a dict holding each of `required` and a dict `stateKey` of tensors;
 * `inspect(obj)`, when given, runs after unpickling and before any tensor is read. Every
 * failure is an Error starting with `where`, worded as torch_checkpoint.read_zip's.
 */
export async function readTorchZip(bytes, where, { model, required = ["config", "state_dict"], inspect = null, stateKey = "state_dict" }) {
  try {
    return await readArchive(new ZipArchive(bytes), where, { model, required, inspect, stateKey });
  } catch (error) {
    if (error instanceof ZipError) {
      throw new Error(`${where} is not a readable zip archive (truncated or corrupt): ${error.message}`, { cause: error });
    }
    throw error;
  }
}

async function unpickleRecord(archive, name, where, model) {
  const data = await archive.read(name);
  try {
    return unpickle(data, { findClass: (module, cls) => findClass(model, module, cls), persistentLoad, build: buildState });
  } catch (error) {
    if (error instanceof Refused) throw new Error(`${where}: data.pkl ${error.message}`, { cause: error });
    const what = error instanceof PickleError ? error.message : `${error.name}: ${error.message}`;
    throw new Error(`${where}: data.pkl is not a valid pickle (${what})`, { cause: error });
  }
}

async function readArchive(archive, where, { model, required, inspect, stateKey }) {
  const pickles = archive.names.filter((n) => n.endsWith("/data.pkl") && n.split("/").length === 2);
  if (pickles.length !== 1) {
    throw new Error(`${where}: a torch checkpoint holds one <archive>/data.pkl; this zip holds ${pickles.length} ` +
      `(${few([...archive.names].sort())})`);
  }
  const prefix = pickles[0].slice(0, -"data.pkl".length);
  const size = archive.entries.get(pickles[0]).fileSize;
  if (size > MAX_PICKLE) throw new Error(`${where}: data.pkl is ${size} bytes, more than a ${model} checkpoint's (${MAX_PICKLE})`);
  let order = "little";
  if (archive.has(`${prefix}byteorder`)) {
    order = Array.from(await archive.read(`${prefix}byteorder`), (b) => (b < 128 ? String.fromCharCode(b) : "\ufffd")).join("").trim();
  }
  if (order !== "little" && order !== "big") throw new Error(`${where}: byteorder record says ${pyRepr(order)}, not little or big`);
  const obj = await unpickleRecord(archive, pickles[0], where, model);
  if (!(obj instanceof PyDict)) {
    throw new Error(`${where}: the checkpoint holds a ${typeName(obj)}, not a dict with ${required.map(pyRepr).join(" and ")}`);
  }
  for (const key of required) {
    if (!obj.has(key)) {
      throw new Error(`${where}: the checkpoint has no ${pyRepr(key)} (its keys: ${listRepr(obj.keys().map((k) => (typeof k === "string" ? k : pyRepr(k))).sort())})`);
    }
  }
  const state = obj.get(stateKey);
  if (!(state instanceof PyDict)) throw new Error(`${where}: ${pyRepr(stateKey)} is a ${typeName(state)}, not a dict`);
  checkStorages(obj, archive, prefix, where);
  if (inspect) inspect(obj);
  const { tensors, shapes } = await materializeAll(state, archive, prefix, order === "little", where, model, stateKey);
  return { obj, tensors, shapes };
}

/** Every storage the pickle refers to (state dict or not) must be a record of the zip. */
function checkStorages(obj, archive, prefix, where) {
  const seen = new Set();
  const stack = [obj];
  while (stack.length) {
    const item = stack.pop();
    if (item !== null && typeof item === "object") {
      if (seen.has(item)) continue;
      seen.add(item);
    }
    if (item instanceof TensorRef) {
      const key = item.storage.key;
      if (!archive.has(`${prefix}data/${key}`)) {
        throw new Error(`${where}: storage ${pyRepr(key)} is referred to but the archive has no record ${prefix}data/${key}`);
      }
    } else if (item instanceof PyDict) {
      stack.push(...item.values());
    } else if (Array.isArray(item)) {
      stack.push(...item);
    } else if (item instanceof PyTuple || item instanceof PySet) {
      stack.push(...item.items);
    }
  }
}

async function materializeAll(state, archive, prefix, little, where, model, stateKey) {
  const uses = new Map();
  for (const [name, ref] of state.entries()) {
    if (typeof name !== "string" || !(ref instanceof TensorRef)) {
      throw new Error(`${where}: ${stateKey} entry ${pyRepr(name)} is a ${typeName(ref)}, not a tensor`);
    }
    uses.set(ref.storage.key, (uses.get(ref.storage.key) ?? 0) + 1);
  }
  const storages = new Map();
  const tensors = new Map();
  const shapes = new Map();
  for (const [name, ref] of state.entries()) {
    tensors.set(name, await materialize(name, ref, storages, archive, prefix, little, where, model, stateKey));
    shapes.set(name, [...ref.size]);
    uses.set(ref.storage.key, uses.get(ref.storage.key) - 1);
    if (!uses.get(ref.storage.key)) storages.delete(ref.storage.key);  // its last tensor: let it go
  }
  return { tensors, shapes };
}

export function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** A float storage's bytes as float32 (f16, bf16, f64 widened or rounded as numpy does). */
function decodeStorage(raw, kind, numel, little) {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (kind === "FloatStorage" && little && raw.byteOffset % 4 === 0) {
    return new Float32Array(raw.buffer, raw.byteOffset, numel).slice();  // the common case: a copy
  }
  const flat = new Float32Array(numel);
  if (kind === "FloatStorage") {
    for (let i = 0; i < numel; i++) flat[i] = view.getFloat32(4 * i, little);
  } else if (kind === "DoubleStorage") {
    for (let i = 0; i < numel; i++) flat[i] = view.getFloat64(8 * i, little);
  } else if (kind === "HalfStorage") {
    for (let i = 0; i < numel; i++) flat[i] = halfToFloat(view.getUint16(2 * i, little));
  } else {
    const bits = new Uint32Array(flat.buffer);
    for (let i = 0; i < numel; i++) bits[i] = view.getUint16(2 * i, little) << 16;
  }
  return flat;
}

async function loadStorage(name, storage, storages, archive, prefix, little, where) {
  const cached = storages.get(storage.key);
  if (cached && !cached.storage.same(storage)) {
    throw new Error(`${where}: tensor ${pyRepr(name)} declares storage ${pyRepr(storage.key)} as ${storage.numel} elements of ` +
      `torch.${storage.kind}, another tensor as ${cached.storage.numel} of torch.${cached.storage.kind}`);
  }
  if (cached) return cached.flat;
  const itemsize = STORAGES[storage.kind][1];
  const record = `${prefix}data/${storage.key}`;
  const fileSize = archive.entries.get(record).fileSize;
  if (fileSize !== storage.numel * itemsize) {
    throw new Error(`${where}: storage ${pyRepr(storage.key)} (of tensor ${pyRepr(name)}) holds ${fileSize} bytes but declares ` +
      `${storage.numel} elements of torch.${storage.kind} (${storage.numel * itemsize} bytes)`);
  }
  const flat = decodeStorage(await archive.read(record), storage.kind, storage.numel, little);
  storages.set(storage.key, { storage, flat });
  return flat;
}

async function materialize(name, ref, storages, archive, prefix, little, where, model, stateKey) {
  const storage = ref.storage;
  if (!FLOAT_STORAGES.includes(storage.kind)) {
    throw new Error(`${where}: tensor ${pyRepr(name)} is stored as torch.${storage.kind}; a ${model} ${stateKey} holds ` +
      "floating-point tensors only");
  }
  const flat = await loadStorage(name, storage, storages, archive, prefix, little, where);
  const { size, stride, offset } = ref;
  const count = size.reduce((a, b) => a * b, 1);
  if (count === 0) return new Float32Array(0);
  const last = offset + size.reduce((acc, n, i) => acc + (n - 1) * stride[i], 0);
  if (last >= flat.length) {
    throw new Error(`${where}: tensor ${pyRepr(name)} (size [${size.join(", ")}], stride [${stride.join(", ")}], offset ${offset}) ` +
      `reaches element ${last} of storage ${pyRepr(storage.key)}, which holds ${storage.numel}`);
  }
  const contiguous = size.every((n, d) => n === 1 || stride[d] === size.slice(d + 1).reduce((a, b) => a * b, 1));
  if (contiguous) return flat.slice(offset, offset + count);
  const out = new Float32Array(count);
  const index = new Array(size.length).fill(0);
  let at = offset;
  for (let i = 0; i < count; i++) {
    out[i] = flat[at];
    for (let d = size.length - 1; d >= 0; d--) {  // odometer over the C-order index
      index[d] += 1;
      at += stride[d];
      if (index[d] < size[d]) break;
      at -= stride[d] * size[d];
      index[d] = 0;
    }
  }
  return out;
}

