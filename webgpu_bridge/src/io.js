// Reading bytes and text from a URL or (in Node) a file path, the same way in a page,
// a Web Worker and Node, with errors that say what could not be read.

const isNode = typeof process !== "undefined" && !!process.versions?.node;

function isFileLike(source) {
  if (source instanceof URL) return source.protocol === "file:";
  return typeof source === "string" && (source.startsWith("file:") ||
    (isNode && !/^[a-z][a-z0-9+.-]*:/i.test(source)));
}

/** Read a resource as an ArrayBuffer: fetch() for http(s)/relative URLs, fs for files in Node. */
export async function readBytes(source) {
  if (isNode && isFileLike(source)) {
    const { readFile } = await import("node:fs/promises");
    const { fileURLToPath } = await import("node:url");
    const path = String(source).startsWith("file:") ? fileURLToPath(source) : source;
    const buf = await readFile(path);
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  }
  const res = await fetch(source);
  if (!res.ok) throw new Error(`could not fetch ${source}: HTTP ${res.status}`);
  return res.arrayBuffer();
}

/** Read a resource as UTF-8 text (see readBytes). */
export async function readText(source) {
  return new TextDecoder().decode(await readBytes(source));
}

/** Resolve `relative` against a base URL or path (a manifest's own location). */
export function resolveBeside(base, relative) {
  if (base instanceof URL || /^[a-z][a-z0-9+.-]*:/i.test(String(base))) {
    return new URL(relative, base);
  }
  const cut = String(base).lastIndexOf("/");
  return cut < 0 ? relative : String(base).slice(0, cut + 1) + relative;
}
