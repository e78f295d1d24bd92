// Zip archives read from bytes in a page, a worker or Node 20: the end-of-central-directory
// record (zip64 too), the central directory, local headers, stored and DEFLATE records
// (DecompressionStream("deflate-raw")), every record's CRC-32 checked, as Python's zipfile
// does. Errors are ZipError; their messages say what is wrong with the archive.

export class ZipError extends Error {}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Uint8Array over `input` (an ArrayBuffer, a typed array or a DataView), no copy. */
export function asBytes(input) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError(`expected an ArrayBuffer or a Uint8Array, got ${input === null ? "null" : typeof input}`);
}

let CRC_TABLE = null;

/** The CRC-32 (zip's, IEEE 802.3) of `bytes`. */
export function crc32(bytes) {
  if (!CRC_TABLE) {
    CRC_TABLE = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function u64(view, at) {
  return view.getUint32(at, true) + view.getUint32(at + 4, true) * 2 ** 32;
}

/** The end record: {count, size, offset, at} (zipfile's _EndRecData, zip64 included). */
function endRecord(bytes, view) {
  const last = bytes.length - 22;
  const first = Math.max(0, last - 65535);
  let at = -1;
  for (let i = last; i >= first; i--) {
    if (view.getUint32(i, true) === EOCD) { at = i; break; }
  }
  if (at < 0) throw new ZipError("File is not a zip file");
  const end = {
    count: view.getUint16(at + 10, true), size: view.getUint32(at + 12, true),
    offset: view.getUint32(at + 16, true), at,
  };
  const locator = at - 20;
  if (locator >= 0 && view.getUint32(locator, true) === ZIP64_LOCATOR) {
    const at64 = locator - 56;
    if (at64 < 0 || view.getUint32(at64, true) !== ZIP64_EOCD) {
      throw new ZipError("Corrupt zip64 end of central directory locator");
    }
    return { count: u64(view, at64 + 32), size: u64(view, at64 + 40), offset: u64(view, at64 + 48), at: at64 };
  }
  return end;
}

/** zip64 sizes and offset from a central-directory extra field where the 32-bit ones are full. */
function zip64Extra(view, start, length, entry) {
  for (let at = start; at + 4 <= start + length;) {
    const id = view.getUint16(at, true);
    const size = view.getUint16(at + 2, true);
    if (id === 1) {
      let p = at + 4;
      for (const key of ["fileSize", "compressSize", "headerOffset"]) {
        if (entry[key] !== 0xffffffff) continue;
        if (p + 8 > at + 4 + size) throw new ZipError("Corrupt zip64 extra field");
        entry[key] = u64(view, p);
        p += 8;
      }
    }
    at += 4 + size;
  }
}

function centralEntry(bytes, view, at, decoder) {
  if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL) {
    throw new ZipError("Bad magic number for central directory");
  }
  const nameLength = view.getUint16(at + 28, true);
  const extraLength = view.getUint16(at + 30, true);
  const commentLength = view.getUint16(at + 32, true);
  if (at + 46 + nameLength + extraLength + commentLength > bytes.length) {
    throw new ZipError("Truncated central directory");
  }
  const entry = {
    flags: view.getUint16(at + 8, true), method: view.getUint16(at + 10, true),
    crc: view.getUint32(at + 16, true), compressSize: view.getUint32(at + 20, true),
    fileSize: view.getUint32(at + 24, true), headerOffset: view.getUint32(at + 42, true),
    name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
  };
  zip64Extra(view, at + 46 + nameLength, extraLength, entry);
  return { entry, next: at + 46 + nameLength + extraLength + commentLength };
}

async function inflateRaw(data) {
  if (typeof DecompressionStream !== "function") {
    throw new ZipError("this JavaScript engine has no DecompressionStream for DEFLATE records");
  }
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A zip archive's records: `names` (in order), `entries` (name → entry), `read(name)`. */
export class ZipArchive {
  constructor(input) {
    this.bytes = asBytes(input);
    const bytes = this.bytes;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.view = view;
    const end = endRecord(bytes, view);
    // data prepended to the archive shifts every offset (zipfile's "concat")
    const concat = end.at - end.size - end.offset;
    if (concat < 0) throw new ZipError("Bad offset for central directory");
    this.entries = new Map();
    const decoder = new TextDecoder();
    let at = end.offset + concat;
    const stop = at + end.size;
    while (at < stop) {
      const { entry, next } = centralEntry(bytes, view, at, decoder);
      entry.headerOffset += concat;
      this.entries.set(entry.name, entry);
      at = next;
    }
    this.names = [...this.entries.keys()];
  }

  has(name) {
    return this.entries.has(name);
  }

  /** The record's raw (compressed) bytes after checking its local header. */
  raw(entry) {
    const { bytes, view } = this;
    const at = entry.headerOffset;
    if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) {
      throw new ZipError(`Bad magic number for file header of '${entry.name}'`);
    }
    const nameLength = view.getUint16(at + 26, true);
    const extraLength = view.getUint16(at + 28, true);
    const local = new TextDecoder().decode(bytes.subarray(at + 30, at + 30 + nameLength));
    if (local !== entry.name) {
      throw new ZipError(`File name in directory '${entry.name}' and header '${local}' differ.`);
    }
    if (entry.flags & 1) throw new ZipError(`File '${entry.name}' is encrypted`);
    const start = at + 30 + nameLength + extraLength;
    if (start + entry.compressSize > bytes.length) {
      throw new ZipError(`Truncated record '${entry.name}'`);
    }
    return bytes.subarray(start, start + entry.compressSize);
  }

  /** The record's bytes (inflated, CRC-checked); ZipError when it is missing or corrupt. */
  async read(name) {
    const entry = this.entries.get(name);
    if (!entry) throw new ZipError(`There is no item named '${name}' in the archive`);
    const raw = this.raw(entry);
    let data;
    if (entry.method === 0) {
      data = raw;
    } else if (entry.method === 8) {
      try {
        data = await inflateRaw(raw);
      } catch (error) {
        throw new ZipError(`Error -3 while decompressing data of '${name}': ${error.message}`);
      }
    } else {
      throw new ZipError(`That compression method (${entry.method}) is not supported ('${name}')`);
    }
    if (data.length !== entry.fileSize) {
      throw new ZipError(`'${name}' inflates to ${data.length} bytes, its directory says ${entry.fileSize}`);
    }
    if (crc32(data) !== entry.crc) throw new ZipError(`Bad CRC-32 for file '${name}'`);
    return data;
  }
}
