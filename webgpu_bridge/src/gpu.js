// Acquiring a WebGPU adapter and device, with errors that say why WebGPU is unavailable.

const ADAPTER_TIMEOUT_MS = 15000;

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The GPU object: the one given, else navigator.gpu; throws when there is none. */
export function findGpu(gpu) {
  if (gpu) return gpu;
  const nav = typeof navigator !== "undefined" ? navigator : undefined;
  if (!nav || !nav.gpu) {
    const where = typeof window === "undefined" ? "this worker/process" : "this page";
    throw new Error(`WebGPU is not available in ${where}: navigator.gpu is undefined ` +
      "(needs a secure context and a browser with WebGPU enabled, e.g. Chromium with " +
      "--enable-unsafe-webgpu; in Node pass {gpu: create([])} from the 'webgpu' package)");
  }
  return nav.gpu;
}

/** Adapter facts kept with every result: vendor, architecture, description, fallback flag. */
export function describeAdapter(adapter) {
  const info = adapter.info ?? {};
  const vendor = info.vendor ?? "";
  const architecture = info.architecture ?? "";
  const isFallbackAdapter = Boolean(info.isFallbackAdapter ?? adapter.isFallbackAdapter);
  const named = info.description || [vendor, architecture].filter(Boolean).join(" ") ||
    "unknown adapter";
  return {
    vendor, architecture, device: info.device ?? "", description: named,
    isFallbackAdapter,
    label: `WebGPU: ${named}${isFallbackAdapter ? " (fallback)" : ""}`,
  };
}

/**
 * Request adapter and device (with `timestamp-query` when offered); throws a clear Error
 * when either is missing.
 */
export async function requestDevice(gpu, { powerPreference = "high-performance" } = {}) {
  const adapter = await withTimeout(gpu.requestAdapter({ powerPreference }),
    ADAPTER_TIMEOUT_MS, "navigator.gpu.requestAdapter()");
  if (!adapter) {
    throw new Error("WebGPU is not available: requestAdapter() returned no adapter " +
      "(no usable GPU or software adapter; in Chromium try --enable-unsafe-webgpu)");
  }
  const limits = {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  };
  // GPU timestamps of each compute pass when the adapter offers them (timing.js)
  const requiredFeatures = adapter.features?.has("timestamp-query") ? ["timestamp-query"] : [];
  const device = await withTimeout(adapter.requestDevice({ requiredLimits: limits, requiredFeatures }),
    ADAPTER_TIMEOUT_MS, "adapter.requestDevice()");
  if (!device) throw new Error("WebGPU is not available: requestDevice() returned no device");
  return { adapter, device, adapterInfo: describeAdapter(adapter) };
}
