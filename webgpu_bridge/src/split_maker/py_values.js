// Values as Python holds them in make_splits' messages: ints, tagged floats and timedeltas,
// datetime64[us] times; repr() of each (and str() of a datetime64), on top of ../py_repr.js.
import { reprFloat, reprString } from "../py_repr.js";

const US_PER_DAY = 86_400_000_000;

/** A value as Python would hold it, for repr(): tagged floats and timedeltas. */
export const pyFloat = (value) => ({ py: "float", value });
export const pyTimedelta = (us) => ({ py: "timedelta", us });

/** str() of a Python int (exact digits past 1e21). */
export function intText(x) {
  return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
}

/** repr() of a JavaScript value read as Python's: integral numbers are ints. */
export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return Number.isInteger(value) ? intText(value) : reprFloat(value);
  if (typeof value === "string") return reprString(value);
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return `[${Array.from(value, pyRepr).join(", ")}]`;
  if (value.py === "float") return reprFloat(value.value);
  if (value.py === "timedelta") return timedeltaRepr(value.us);
  if (value.py === "datetime") return datetimeRepr(value.us);
  return String(value);
}

/** type(value).__name__ of a JavaScript value read as Python's. */
export function pyTypeName(value) {
  if (typeof value === "string") return "str";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "boolean") return "bool";
  if (value === null || value === undefined) return "NoneType";
  return value.constructor === Object || !value.constructor ? "dict" : value.constructor.name;
}

/** repr() of datetime.timedelta(microseconds=us). */
export function timedeltaRepr(us) {
  const days = Math.floor(us / US_PER_DAY);
  const rest = us - days * US_PER_DAY;
  const seconds = Math.floor(rest / 1e6);
  const micro = rest - seconds * 1e6;
  const args = [];
  if (days) args.push(`days=${days}`);
  if (seconds) args.push(`seconds=${seconds}`);
  if (micro) args.push(`microseconds=${micro}`);
  return `datetime.timedelta(${args.length ? args.join(", ") : "0"})`;
}

function datetimeFields(us) {
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const micro = d.getUTCMilliseconds() * 1000 + (us - ms * 1000);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(),
    d.getUTCMinutes(), d.getUTCSeconds(), micro];
}

/** repr() of numpy.datetime64(us, "us").item(): a datetime.datetime (an int out of its range). */
export function datetimeRepr(us) {
  const fields = datetimeFields(us);
  if (fields[0] < 1 || fields[0] > 9999) return intText(us);
  if (fields[6] === 0) {
    fields.pop();
    if (fields[5] === 0) fields.pop();
  }
  return `datetime.datetime(${fields.join(", ")})`;
}

/** str() of numpy.datetime64(us, "us"): 2024-03-01T12:30:00.000000. */
export function datetime64Str(us) {
  const [y, mo, d, h, mi, s, micro] = datetimeFields(us);
  const p = (x, n = 2) => String(x).padStart(n, "0");
  return `${p(y, 4)}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}.${p(micro, 6)}`;
}
