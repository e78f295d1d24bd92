// GPU plumbing shared by the models: pipelines compiled once per (kernel, entry point),
// buffers kept per role and reused while they are large enough, uniform blocks per
// dispatch site, and timed stages that await the GPU work so the times are real (with
// GPU timestamps of each pass when the device has `timestamp-query`; see timing.js).
import { loadKernel } from "./kernels.js";
import { TimestampQueries } from "./timing.js";

const now = () => performance.now();

export class Engine {
  constructor(device) {
    this.device = device;
    this.pipelines = new Map();
    this.buffers = new Map();
    this.stats = { pipelinesCreated: 0, buffersCreated: 0, submits: 0 };
    const U = globalThis.GPUBufferUsage;
    this.usage = {
      storage: U.STORAGE | U.COPY_DST | U.COPY_SRC,
      uniform: U.UNIFORM | U.COPY_DST,
      read: U.MAP_READ | U.COPY_DST,
    };
    /** The timestamp query set, or null when the device lacks `timestamp-query`. */
    this.timestamps = device.features?.has("timestamp-query") ? new TimestampQueries(device) : null;
  }

  /** The compute pipeline of `kernel`'s `entry`, compiled on first use. */
  async pipeline(kernel, entry = "main") {
    const key = `${kernel}:${entry}`;
    if (!this.pipelines.has(key)) {
      const made = (async () => {
        const module = this.device.createShaderModule({ label: kernel, code: await loadKernel(kernel) });
        this.stats.pipelinesCreated++;
        return this.device.createComputePipelineAsync({
          label: key, layout: "auto", compute: { module, entryPoint: entry },
        });
      })();
      this.pipelines.set(key, made);
      made.catch(() => this.pipelines.delete(key));
    }
    return this.pipelines.get(key);
  }

  /** A buffer for `role` of at least `bytes`, reused across passes; re-created only to grow. */
  buffer(role, bytes, kind = "storage") {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    const have = this.buffers.get(role);
    if (have && have.size >= size && have.kind === kind) return have.buffer;
    if (have) have.buffer.destroy();
    const buffer = this.device.createBuffer({ label: role, size, usage: this.usage[kind] });
    this.stats.buffersCreated++;
    this.buffers.set(role, { buffer, size, kind });
    return buffer;
  }

  /** Write a typed array into the role's buffer (queued before the next submit). */
  upload(role, array) {
    const buffer = this.buffer(role, array.byteLength);
    this.device.queue.writeBuffer(buffer, 0, array.buffer, array.byteOffset, array.byteLength);
    return buffer;
  }

  /** A 32-byte uniform block from [["u32"|"f32", value], ...] for one dispatch site. */
  uniform(role, fields) {
    const data = new ArrayBuffer(32);
    const view = new DataView(data);
    fields.forEach(([type, value], i) => {
      if (type === "f32") view.setFloat32(4 * i, value, true);
      else view.setUint32(4 * i, value, true);
    });
    const buffer = this.buffer(`uniform:${role}`, 32, "uniform");
    this.device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  /** Record one dispatch; `bindings` maps binding number to buffer. */
  dispatch(pass, pipeline, bindings, groups) {
    const entries = Object.entries(bindings).map(([binding, buffer]) => ({
      binding: Number(binding), resource: { buffer },
    }));
    const bindGroup = this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0), entries,
    });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(...groups);
  }

  /**
   * Run `record(pass)` in one compute pass, submit, and await the GPU; returns the
   * milliseconds from before recording until the work is done. With a timestamp query
   * `pair` (StageTimer) the pass writes its beginning and end timestamps there.
   * Validation errors throw.
   */
  async stage(record, pair = null) {
    const t0 = now();
    this.device.pushErrorScope("validation");
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass(pair === null ? {} : { timestampWrites: this.timestamps.writes(pair) });
    await record(pass);
    pass.end();
    this.device.queue.submit([encoder.finish()]);
    this.stats.submits++;
    const error = await this.device.popErrorScope();
    await this.device.queue.onSubmittedWorkDone();
    if (error) throw new Error(`WebGPU validation error: ${error.message}`);
    return now() - t0;
  }

  /** Copy `floats` values of a buffer back to the CPU (awaits mapAsync). */
  async read(buffer, floats) {
    const bytes = floats * 4;
    const staging = this.buffer(`read:${buffer.label}`, bytes, "read");
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    this.stats.submits++;
    await staging.mapAsync(globalThis.GPUMapMode.READ, 0, bytes);
    const out = new Float32Array(staging.getMappedRange(0, bytes).slice(0));
    staging.unmap();
    return out;
  }

  destroy() {
    for (const { buffer } of this.buffers.values()) buffer.destroy();
    this.buffers.clear();
    this.pipelines.clear();
    this.timestamps?.destroy();
  }
}

export const workgroups = (count, size) => Math.ceil(count / size);

// Most rows one batch may have: 65535 workgroups per dispatch dimension, 16 rows each.
const MAX_BATCH_ROWS = 65535 * 16;

/** Query rows per batch: `model.batchRows` (checked) or `fallback`, clipped to [1, m]. */
export function batchRows(model, fallback, m) {
  const rows = model.batchRows ?? fallback;
  if (!Number.isInteger(rows) || rows < 1) {
    throw new RangeError(`batchRows must be a positive integer, got ${model.batchRows}`);
  }
  return Math.max(1, Math.min(rows, m, MAX_BATCH_ROWS));
}
export { now };
