// GPU plumbing shared by the models: pipelines compiled once per (kernel, entry point),
// buffers kept per role and reused while they are large enough, uniform blocks numbered per
// submission, counters of what a call costs (dispatches, passes, submits, bytes uploaded),
// and timed stages. A stage is one compute pass; without GPU timestamps each is submitted
// and awaited, so its wall time is real (SPEC §8); with `timestamp-query` (timing.js) the
// passes are recorded and submitted together, awaited once where the CPU needs a result
// (`settle`, before every read-back), and each pass's GPU time comes from its timestamps.
import { loadKernel } from "./kernels.js";
import { TimestampQueries } from "./timing.js";

const now = () => performance.now();
const UNIFORM_BYTES = 128;

export class Engine {
  /**
   * `defer` (default: when the device has `timestamp-query`): record timed passes and
   * submit them together, one await per `settle` instead of one per pass.
   */
  constructor(device, { defer = true } = {}) {
    this.device = device;
    this.pipelines = new Map();
    this.buffers = new Map();
    this.stats = { pipelinesCreated: 0, buffersCreated: 0, submits: 0, passes: 0, dispatches: 0,
      bytesUploaded: 0 };
    const U = globalThis.GPUBufferUsage;
    this.usage = {
      storage: U.STORAGE | U.COPY_DST | U.COPY_SRC,
      uniform: U.UNIFORM | U.COPY_DST,
      read: U.MAP_READ | U.COPY_DST,
    };
    /** The timestamp query set, or null when the device lacks `timestamp-query`. */
    this.timestamps = device.features?.has("timestamp-query") ? new TimestampQueries(device) : null;
    this.deferred = Boolean(defer && this.timestamps);
    this.recorded = [];       // finished command buffers of deferred passes, not yet submitted
    this.scopeOpen = false;   // a validation error scope spans the deferred passes until settle
    this.uniformsUsed = 0;    // uniform blocks written since the GPU was last idle
    this.recording = false;   // inside a pass's record callback
  }

  /** The compute pipeline of `kernel`'s `entry` with override `constants`, compiled on first use. */
  async pipeline(kernel, entry = "main", constants = null) {
    const key = `${kernel}:${entry}${constants ? `:${JSON.stringify(constants)}` : ""}`;
    if (!this.pipelines.has(key)) {
      const made = (async () => {
        const module = this.device.createShaderModule({ label: kernel, code: await loadKernel(kernel) });
        this.stats.pipelinesCreated++;
        return this.device.createComputePipelineAsync({
          label: key, layout: "auto", compute: { module, entryPoint: entry, ...(constants ? { constants } : {}) },
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

  /**
   * Write a typed array into `buffer` at byte `offset`. Deferred passes recorded before it
   * are submitted first, so the write lands after the work that reads the old contents;
   * inside a pass's `record` (a buffer made on first use: RoPE tables, SSMax vectors) the
   * write is queued as it is, so it must not touch a buffer that a recorded pass uses.
   */
  write(buffer, array, offset = 0) {
    if (!this.recording) this.submitRecorded();
    this.device.queue.writeBuffer(buffer, offset, array.buffer, array.byteOffset, array.byteLength);
    this.stats.bytesUploaded += array.byteLength;
    return buffer;
  }

  /** Write a typed array into the role's buffer (queued before the next submit). */
  upload(role, array) {
    return this.write(this.buffer(role, array.byteLength), array);
  }

  /**
   * A uniform block from [["u32"|"f32", value], ...] (at most 32 fields) for the next
   * dispatch. Blocks are numbered until the GPU is next idle, so no pass in flight or
   * waiting to be submitted has its block overwritten.
   */
  uniform(fields) {
    const data = new ArrayBuffer(UNIFORM_BYTES);
    const view = new DataView(data);
    fields.forEach(([type, value], i) => {
      if (type === "f32") view.setFloat32(4 * i, value, true);
      else view.setUint32(4 * i, value, true);
    });
    const buffer = this.buffer(`uniform:${this.uniformsUsed++}`, UNIFORM_BYTES, "uniform");
    const bytes = Math.max(16, Math.ceil((4 * fields.length) / 16) * 16);
    this.device.queue.writeBuffer(buffer, 0, data, 0, bytes);
    this.stats.bytesUploaded += bytes;
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
    this.stats.dispatches++;
  }

  /** `record(pass)` in one compute pass (timestamps into query `pair` unless null); the command buffer. */
  async encode(record, pair) {
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass(pair === null ? {} : { timestampWrites: this.timestamps.writes(pair) });
    this.recording = true;
    try {
      await record(pass);
    } finally {
      this.recording = false;
    }
    pass.end();
    this.stats.passes++;
    return encoder.finish();
  }

  /**
   * Run `record(pass)` in one compute pass, submit, and await the GPU; returns the
   * milliseconds from before recording until the work is done. With a timestamp query
   * `pair` (StageTimer) the pass writes its beginning and end timestamps there.
   * Validation errors throw.
   */
  async stage(record, pair = null) {
    await this.settle();
    const t0 = now();
    this.device.pushErrorScope("validation");
    this.device.queue.submit([await this.encode(record, pair)]);
    this.stats.submits++;
    const error = await this.device.popErrorScope();
    await this.device.queue.onSubmittedWorkDone();
    this.uniformsUsed = 0;
    if (error) throw new Error(`WebGPU validation error: ${error.message}`);
    return now() - t0;
  }

  /** Record `record(pass)` as one deferred pass (submitted by the next write, read or settle). */
  async defer(record, pair) {
    if (!this.scopeOpen) {
      this.device.pushErrorScope("validation");
      this.scopeOpen = true;
    }
    this.recorded.push(await this.encode(record, pair));
  }

  /** Submit the deferred passes recorded so far, without waiting for them. */
  submitRecorded() {
    if (!this.recorded.length) return;
    this.device.queue.submit(this.recorded);
    this.stats.submits++;
    this.recorded = [];
  }

  /** Submit what is recorded and await the GPU; validation errors of deferred passes throw. */
  async settle() {
    this.submitRecorded();
    if (!this.scopeOpen) return;
    this.scopeOpen = false;
    const error = await this.device.popErrorScope();
    await this.device.queue.onSubmittedWorkDone();
    this.uniformsUsed = 0;
    if (error) throw new Error(`WebGPU validation error: ${error.message}`);
  }

  /** Copy `floats` values of a buffer back to the CPU (awaits mapAsync). */
  async read(buffer, floats) {
    await this.settle();
    const bytes = floats * 4;
    const staging = this.buffer(`read:${buffer.label}`, bytes, "read");
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    this.stats.submits++;
    await staging.mapAsync(globalThis.GPUMapMode.READ, 0, bytes);
    const out = new Float32Array(staging.getMappedRange(0, bytes).slice(0));
    staging.unmap();
    this.uniformsUsed = 0;
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
