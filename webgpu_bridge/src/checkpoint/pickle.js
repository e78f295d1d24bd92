// A restricted pickle interpreter: the opcodes of protocols 0–5 that rebuild plain data
// (None, bools, ints, floats, strings, bytes, tuples, lists, dicts, sets) and a caller-given
// set of globals; any other GLOBAL / STACK_GLOBAL / INST is refused (Refused) before
// anything is built, and nothing but the caller's functions is ever called. Python values
// become: None → null, int → number (BigInt beyond 2^53), float → PyFloat, str → string,
// bytes → Uint8Array, list → Array, tuple → PyTuple, dict → PyDict, set → PySet.

/** A refusal of the file's content (a foreign class, a malformed record): the message says why. */
export class Refused extends Error {}
/** Malformed opcodes: the pickle is not valid. */
export class PickleError extends Error {}

export class PyFloat {
  constructor(value) { this.value = value; }
}

export class PyTuple {
  constructor(items) { this.items = items; }
}

export class PySet {
  constructor(items = [], typeName = "set") { this.items = items; this.typeName = typeName; }
}

/** A callable global: `call(args)` (its positional arguments), `isClass` for type objects. */
export class PyCallable {
  constructor(name, call, isClass = false) { this.name = name; this.call = call; this.isClass = isClass; }
}

function hashKey(key) {
  if (typeof key === "string") return `s${key}`;
  if (typeof key === "number" || typeof key === "bigint") return `n${key}`;
  if (typeof key === "boolean") return `n${key ? 1 : 0}`;
  if (key === null) return "None";
  if (key instanceof PyFloat) return `n${key.value}`;
  if (key instanceof PyTuple) return `t(${key.items.map(hashKey).join(",")})`;
  if (key instanceof Uint8Array) return `b${Array.from(key).join(",")}`;
  throw new PickleError(`TypeError: unhashable type: '${typeName(key)}'`);
}

/** A Python dict (insertion-ordered, keys hashed by value like Python's). */
export class PyDict {
  constructor(typeName = "dict") { this.map = new Map(); this.typeName = typeName; this.attributes = null; }
  set(key, value) {
    const h = hashKey(key);
    const old = this.map.get(h);
    this.map.set(h, [old ? old[0] : key, value]);
  }
  get(key) { return this.map.get(hashKey(key))?.[1]; }
  has(key) { return this.map.has(hashKey(key)); }
  get size() { return this.map.size; }
  keys() { return [...this.map.values()].map((kv) => kv[0]); }
  values() { return [...this.map.values()].map((kv) => kv[1]); }
  entries() { return [...this.map.values()]; }
}

/** Python's type(value).__name__. */
export function typeName(value) {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number" || typeof value === "bigint") return "int";
  if (typeof value === "string") return "str";
  if (value instanceof PyFloat) return "float";
  if (Array.isArray(value)) return "list";
  if (value instanceof PyTuple) return "tuple";
  if (value instanceof PyDict || value instanceof PySet) return value.typeName;
  if (value instanceof Uint8Array) return value.bytearray ? "bytearray" : "bytes";
  if (value instanceof PyCallable) return value.isClass ? "type" : "function";
  return value.constructor?.pyName ?? value.constructor?.name ?? "object";
}

function strRepr(s) {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    if (ch === "\\" || ch === quote) out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch < " " || ch === "\x7f") out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return quote + out + quote;
}

/** Python's repr(float). */
export function floatRepr(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return Object.is(x, -0) ? "-0.0" : `${x}.0`;
  return String(x).replace(/e([+-])(\d)$/, "e$10$2");
}

/** Python's repr of an unpickled value (records by their fields). */
export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "string") return strRepr(value);
  if (value instanceof PyFloat) return floatRepr(value.value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (value instanceof PyTuple) {
    return value.items.length === 1 ? `(${pyRepr(value.items[0])},)` : `(${value.items.map(pyRepr).join(", ")})`;
  }
  if (value instanceof PyDict) {
    const body = value.entries().map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ");
    return value.typeName === "dict" ? `{${body}}` : `${value.typeName}({${body}})`;
  }
  if (value instanceof PySet) {
    const body = value.items.map(pyRepr).join(", ");
    if (value.typeName === "set") return value.items.length ? `{${body}}` : "set()";
    return value.items.length ? `frozenset({${body}})` : "frozenset()";
  }
  if (value instanceof Uint8Array) {
    return `b'${Array.from(value, (b) => (b >= 32 && b < 127 && b !== 39 && b !== 92
      ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`)).join("")}'`;
  }
  if (value instanceof PyCallable) return `<${value.isClass ? "class" : "function"} ${value.name}>`;
  if (typeof value.repr === "function") return value.repr();
  return `<${typeName(value)} object>`;
}

/** Python's iteration over a value (lists, tuples, sets, dict keys), for the constructors. */
export function iterate(value) {
  if (Array.isArray(value)) return value;
  if (value instanceof PyTuple || value instanceof PySet) return value.items;
  if (value instanceof PyDict) return value.keys();
  if (typeof value === "string") return [...value];
  throw new PickleError(`TypeError: '${typeName(value)}' object is not iterable`);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function decodeAscii(bytes) {
  for (const b of bytes) {
    if (b > 127) throw new PickleError("UnicodeDecodeError: 'ascii' codec can't decode a pickled str");
  }
  return String.fromCharCode(...bytes);
}

function littleInt(bytes) {
  if (!bytes.length) return 0;
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  if (bytes[bytes.length - 1] & 0x80) v -= 1n << BigInt(8 * bytes.length);
  return normalInt(v);
}

function normalInt(v) {
  return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v;
}

function textInt(line) {
  const text = line.trim().replace(/L$/, "");
  if (!/^[+-]?\d+$/.test(text)) throw new PickleError(`ValueError: invalid literal for int(): '${line}'`);
  return normalInt(BigInt(text));
}

/** The opcode reader and stacks; `load()` runs to STOP. */
class Machine {
  constructor(bytes, { findClass, persistentLoad, build }) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    this.stack = [];
    this.marks = [];
    this.memo = new Map();
    this.findClass = findClass;
    this.persistentLoad = persistentLoad;
    this.build = build;
  }
  take(n) {
    if (n < 0 || this.pos + n > this.bytes.length) throw new PickleError("EOFError: pickle data was truncated");
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  u8() { return this.take(1)[0]; }
  u16() { const at = this.pos; this.take(2); return this.view.getUint16(at, true); }
  u32() { const at = this.pos; this.take(4); return this.view.getUint32(at, true); }
  i32() { const at = this.pos; this.take(4); return this.view.getInt32(at, true); }
  u64() {
    const at = this.pos;
    this.take(8);
    const v = this.view.getUint32(at, true) + this.view.getUint32(at + 4, true) * 2 ** 32;
    if (v > 2 ** 31) throw new PickleError("OverflowError: pickled length exceeds this reader's limit");
    return v;
  }
  line() {
    const end = this.bytes.indexOf(10, this.pos);
    if (end < 0) throw new PickleError("EOFError: pickle data was truncated (no end of line)");
    const out = this.bytes.subarray(this.pos, end);
    this.pos = end + 1;
    return decodeAscii(out);
  }
  utf8(n) {
    try {
      return UTF8.decode(this.take(n));
    } catch (error) {
      if (error instanceof PickleError) throw error;
      throw new PickleError("UnicodeDecodeError: a pickled str is not UTF-8");
    }
  }
  push(v) { this.stack.push(v); }
  pop() {
    if (!this.stack.length) throw new PickleError("UnpicklingError: unpickling stack underflow");
    return this.stack.pop();
  }
  top() {
    if (!this.stack.length) throw new PickleError("UnpicklingError: unpickling stack underflow");
    return this.stack[this.stack.length - 1];
  }
  popMark() {
    if (!this.marks.length) throw new PickleError("UnpicklingError: could not find MARK");
    const items = this.stack;
    this.stack = this.marks.pop();
    return items;
  }
  memoGet(key) {
    if (!this.memo.has(key)) throw new PickleError(`KeyError: memo key ${key} not found`);
    this.push(this.memo.get(key));
  }
  call(callable, args) {
    if (!(callable instanceof PyCallable)) {
      throw new PickleError(`TypeError: '${typeName(callable)}' object is not callable`);
    }
    return callable.call(args);
  }
  load() {
    for (;;) {
      const code = this.u8();
      const op = OPCODES[code];
      if (!op) throw new PickleError(`UnpicklingError: invalid load key, '\\x${code.toString(16).padStart(2, "0")}'.`);
      if (op === STOP) return this.pop();
      op(this);
    }
  }
}

function STOP() {}

function setItems(m, target, items) {
  if (!(target instanceof PyDict)) {
    throw new PickleError(`TypeError: '${typeName(target)}' object does not support item assignment`);
  }
  if (items.length % 2) throw new PickleError("UnpicklingError: odd number of items for SETITEMS");
  for (let i = 0; i < items.length; i += 2) target.set(items[i], items[i + 1]);
}

function appendItems(target, items) {
  if (!Array.isArray(target)) throw new PickleError(`AttributeError: '${typeName(target)}' object has no attribute 'append'`);
  target.push(...items);
}

function addItems(target, items) {
  if (!(target instanceof PySet) || target.typeName !== "set") {
    throw new PickleError(`AttributeError: '${typeName(target)}' object has no attribute 'add'`);
  }
  for (const item of items) {
    const h = hashKey(item);
    if (!target.items.some((x) => hashKey(x) === h)) target.items.push(item);
  }
}

function newObject(m, cls, args) {
  if (!(cls instanceof PyCallable) || !cls.isClass) {
    throw new PickleError(`AttributeError: '${typeName(cls)}' object has no attribute '__new__'`);
  }
  return cls.call(args, { newOnly: true });
}

function build(m) {
  const state = m.pop();
  const inst = m.top();
  m.build(inst, state);
}

const OPCODES = [];
const define = (chars, fn) => { for (const c of chars) OPCODES[typeof c === "number" ? c : c.charCodeAt(0)] = fn; };
define(".", STOP);
define([0x80], (m) => { const p = m.u8(); if (p > 5) throw new PickleError(`ValueError: unsupported pickle protocol: ${p}`); });
define([0x95], (m) => { m.take(8); });
define("(", (m) => { m.marks.push(m.stack); m.stack = []; });
define("0", (m) => { m.pop(); });
define("1", (m) => { m.popMark(); });
define("2", (m) => { m.push(m.top()); });
define("N", (m) => m.push(null));
define([0x88], (m) => m.push(true));
define([0x89], (m) => m.push(false));
define("I", (m) => {
  const line = m.line();
  m.push(line === "00" ? false : line === "01" ? true : textInt(line));
});
define("J", (m) => m.push(m.i32()));
define("K", (m) => m.push(m.u8()));
define("M", (m) => m.push(m.u16()));
define("L", (m) => m.push(textInt(m.line())));
define([0x8a], (m) => m.push(littleInt(m.take(m.u8()))));
define([0x8b], (m) => {
  const n = m.i32();
  if (n < 0) throw new PickleError("UnpicklingError: LONG pickle has negative byte count");
  m.push(littleInt(m.take(n)));
});
define("F", (m) => {
  const text = m.line().trim();
  const value = Number(text);
  if (text === "" || (Number.isNaN(value) && !/^[+-]?nan$/i.test(text))) {
    throw new PickleError(`ValueError: could not convert string to float: '${text}'`);
  }
  m.push(new PyFloat(value));
});
define("G", (m) => { const at = m.pos; m.take(8); m.push(new PyFloat(m.view.getFloat64(at, false))); });
define("X", (m) => m.push(m.utf8(m.u32())));
define([0x8c], (m) => m.push(m.utf8(m.u8())));
define([0x8d], (m) => m.push(m.utf8(m.u64())));
define("V", (m) => m.push(m.line().replace(/\\u([0-9a-fA-F]{4})/g, (_, h) => String.fromCharCode(parseInt(h, 16)))));
define("S", (m) => {
  const text = m.line().trim();
  const quoted = /^'(.*)'$/s.exec(text) ?? /^"(.*)"$/s.exec(text);
  if (!quoted) throw new PickleError("UnpicklingError: the STRING opcode argument must be quoted");
  m.push(quoted[1]);
});
define("T", (m) => { const n = m.i32(); m.push(decodeAscii(m.take(n))); });
define("U", (m) => m.push(decodeAscii(m.take(m.u8()))));
define("B", (m) => m.push(m.take(m.u32()).slice()));
define("C", (m) => m.push(m.take(m.u8()).slice()));
define([0x8e], (m) => m.push(m.take(m.u64()).slice()));
define([0x96], (m) => { const b = m.take(m.u64()).slice(); b.bytearray = true; m.push(b); });
define(")", (m) => m.push(new PyTuple([])));
define("t", (m) => m.push(new PyTuple(m.popMark())));
define([0x85], (m) => m.push(new PyTuple([m.pop()])));
define([0x86], (m) => { const b = m.pop(); const a = m.pop(); m.push(new PyTuple([a, b])); });
define([0x87], (m) => { const c = m.pop(); const b = m.pop(); const a = m.pop(); m.push(new PyTuple([a, b, c])); });
define("]", (m) => m.push([]));
define("l", (m) => m.push(m.popMark()));
define("a", (m) => { const v = m.pop(); appendItems(m.top(), [v]); });
define("e", (m) => { const items = m.popMark(); appendItems(m.top(), items); });
define("}", (m) => m.push(new PyDict()));
define("d", (m) => { const d = new PyDict(); setItems(m, d, m.popMark()); m.push(d); });
define("s", (m) => { const v = m.pop(); const k = m.pop(); setItems(m, m.top(), [k, v]); });
define("u", (m) => { const items = m.popMark(); setItems(m, m.top(), items); });
define([0x8f], (m) => m.push(new PySet()));
define([0x90], (m) => { const items = m.popMark(); addItems(m.top(), items); });
define([0x91], (m) => { const s = new PySet([], "set"); addItems(s, m.popMark()); s.typeName = "frozenset"; m.push(s); });
define("p", (m) => { m.memo.set(textInt(m.line()), m.top()); });
define("q", (m) => { m.memo.set(m.u8(), m.top()); });
define("r", (m) => { m.memo.set(m.u32(), m.top()); });
define([0x94], (m) => { m.memo.set(m.memo.size, m.top()); });
define("g", (m) => m.memoGet(textInt(m.line())));
define("h", (m) => m.memoGet(m.u8()));
define("j", (m) => m.memoGet(m.u32()));
define("c", (m) => { const module = m.line(); const name = m.line(); m.push(m.findClass(module, name)); });
define([0x93], (m) => {
  const name = m.pop();
  const module = m.pop();
  if (typeof name !== "string" || typeof module !== "string") {
    throw new PickleError("UnpicklingError: STACK_GLOBAL requires str");
  }
  m.push(m.findClass(module, name));
});
define("i", (m) => {
  const module = m.line();
  const name = m.line();
  const cls = m.findClass(module, name);
  m.push(m.call(cls, m.popMark()));
});
define("o", (m) => {
  const items = m.popMark();
  if (!items.length) throw new PickleError("UnpicklingError: OBJ without a class");
  m.push(m.call(items[0], items.slice(1)));
});
define([0x81], (m) => {
  const args = m.pop();
  const cls = m.pop();
  if (!(args instanceof PyTuple)) throw new PickleError("UnpicklingError: NEWOBJ expected an arg tuple");
  m.push(newObject(m, cls, args.items));
});
define([0x92], (m) => {
  m.pop();
  const args = m.pop();
  const cls = m.pop();
  if (!(args instanceof PyTuple)) throw new PickleError("UnpicklingError: NEWOBJ_EX args argument must be a tuple");
  m.push(newObject(m, cls, args.items));
});
define("R", (m) => {
  const args = m.pop();
  const callable = m.pop();
  if (!(args instanceof PyTuple)) throw new PickleError("TypeError: argument list must be a tuple");
  m.push(m.call(callable, args.items));
});
define("b", build);
define("P", (m) => m.push(m.persistentLoad(m.line())));
define("Q", (m) => { const pid = m.pop(); m.push(m.persistentLoad(pid)); });
define([0x82, 0x83, 0x84], () => { throw new PickleError("ValueError: unregistered extension code"); });
define([0x97, 0x98], () => { throw new PickleError("UnpicklingError: pickle stream refers to out-of-band data"); });

/** Run the pickle `bytes` to its STOP and return the object it builds. */
export function unpickle(bytes, hooks) {
  return new Machine(bytes, hooks).load();
}
