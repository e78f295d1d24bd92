// The safetensors layout, read in a page, a worker or Node: an 8-byte little-endian
// header length N, N bytes of JSON (per tensor dtype, shape, data_offsets; "__metadata__"
// a string map), then the little-endian buffer. Every error names the tensor at fault.
// This is tabular_fm's lenient reader (F32/F64, finite values); the checkpoints' checked
// reader, in Python's words, is ./checkpoint/safetensors.js.

const DTYPES = { F32: 4, F64: 8 };

/** {metadata, tensors: Map(name -> Float32Array), shapes: Map(name -> shape)} of a file's bytes. */
export function parseSafetensors(bytes, name = "weights") {
  if (!(bytes instanceof ArrayBuffer)) throw new TypeError(`${name}: expected an ArrayBuffer`);
  if (bytes.byteLength < 8) throw new Error(`${name}: ${bytes.byteLength} bytes is not a safetensors file`);
  const view = new DataView(bytes);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > bytes.byteLength - 8) {
    throw new Error(`${name}: declares a ${n}-byte header but holds ${bytes.byteLength - 8} ` +
      "bytes after the length (truncated or not safetensors)");
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 8, n)));
  } catch (error) {
    throw new Error(`${name}: the header is not JSON (${error.message})`, { cause: error });
  }
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  const start = 8 + n;
  const size = bytes.byteLength - start;
  const tensors = new Map();
  const shapes = new Map();
  for (const [tensor, entry] of Object.entries(header)) {
    const itemsize = DTYPES[entry?.dtype];
    if (!itemsize) {
      throw new Error(`${name}: tensor '${tensor}' has dtype ${JSON.stringify(entry?.dtype)}; ` +
        `this reader takes ${Object.keys(DTYPES).join(", ")}`);
    }
    const [begin, end] = entry.data_offsets ?? [];
    const count = (entry.shape ?? []).reduce((a, b) => a * b, 1);
    if (!Number.isInteger(begin) || !Number.isInteger(end) || end - begin !== count * itemsize) {
      throw new Error(`${name}: tensor '${tensor}' spans bytes ${begin}..${end} but shape ` +
        `${JSON.stringify(entry.shape)} of ${entry.dtype} needs ${count * itemsize}`);
    }
    if (end > size) {
      throw new Error(`${name}: tensor '${tensor}' ends at byte ${end} of a ${size}-byte buffer ` +
        "(the file is truncated)");
    }
    const data = new Float32Array(count);
    const at = start + begin;
    for (let i = 0; i < count; i++) {
      data[i] = itemsize === 4 ? view.getFloat32(at + 4 * i, true) : view.getFloat64(at + 8 * i, true);
      if (!Number.isFinite(data[i])) throw new Error(`${name}: tensor '${tensor}' has non-finite values`);
    }
    tensors.set(tensor, data);
    shapes.set(tensor, entry.shape);
  }
  return { metadata, tensors, shapes };
}
