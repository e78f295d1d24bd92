// Stage timings of one predict call: wall times (performance.now() around awaited GPU
// work, SPEC §8) per stage (embed, each layer, head) and, when the device has the
// `timestamp-query` feature, GPU times of the same stages from timestamps written at the
// beginning and end of each compute pass, read back once after the timed work.

const QUERY_PAIRS = 1024;
const now = () => performance.now();

/** The stage a timing belongs to: "embed", "head" or a layer index. */
function checkStage(stage, nLayers) {
  if (stage === "embed" || stage === "head" || (Number.isInteger(stage) && stage >= 0 && stage < nLayers)) return;
  throw new RangeError(`unknown timing stage ${JSON.stringify(stage)}`);
}

/** The per-engine query set and its resolve / read-back buffers (created once, reused). */
export class TimestampQueries {
  constructor(device) {
    this.device = device;
    const U = globalThis.GPUBufferUsage;
    this.set = device.createQuerySet({ type: "timestamp", count: 2 * QUERY_PAIRS });
    this.resolve = device.createBuffer({ label: "timestamps", size: 16 * QUERY_PAIRS,
      usage: U.QUERY_RESOLVE | U.COPY_SRC });
    this.read = device.createBuffer({ label: "timestamps:read", size: 16 * QUERY_PAIRS,
      usage: U.MAP_READ | U.COPY_DST });
  }

  /** The timestampWrites of a compute pass that records query pair `pair`. */
  writes(pair) {
    return { querySet: this.set, beginningOfPassWriteIndex: 2 * pair, endOfPassWriteIndex: 2 * pair + 1 };
  }

  /** Milliseconds between the two timestamps of each of the first `pairs` pairs. */
  async durations(pairs) {
    const bytes = 16 * pairs;
    const encoder = this.device.createCommandEncoder();
    encoder.resolveQuerySet(this.set, 0, 2 * pairs, this.resolve, 0);
    encoder.copyBufferToBuffer(this.resolve, 0, this.read, 0, bytes);
    this.device.queue.submit([encoder.finish()]);
    await this.read.mapAsync(globalThis.GPUMapMode.READ, 0, bytes);
    const ns = new BigUint64Array(this.read.getMappedRange(0, bytes).slice(0));
    this.read.unmap();
    return Array.from({ length: pairs }, (_, i) => (ns[2 * i + 1] > ns[2 * i] ? Number(ns[2 * i + 1] - ns[2 * i]) / 1e6 : 0));
  }

  destroy() {
    this.set.destroy();
    this.resolve.destroy();
    this.read.destroy();
  }
}

/**
 * Timings of one call: `stage(name, record)` runs a timed compute pass through the
 * engine, `add(name, ms)` adds CPU-side time (standardization, uploads) to a stage's wall
 * time, `batch()` counts a query batch, `settle()` awaits the passes recorded so far (call
 * it before timing a read-back), and `finish()` gives
 * {embed, layers, head, total, batches, deferred, gpu: {embed, layers, head, total} | null}.
 *
 * On a deferred engine (timestamps; Engine) passes are recorded, not awaited one by one: a
 * settle awaits them all at once and shares the wall time since the first of them among
 * their stages in proportion to their GPU times (evenly where the timestamps read zero).
 * Otherwise each pass is awaited and its stage gets its own wall time.
 */
export class StageTimer {
  constructor(engine, nLayers) {
    this.engine = engine;
    this.nLayers = nLayers;
    this.wall = { embed: 0, layers: new Array(nLayers).fill(0), head: 0 };
    this.gpu = engine.timestamps ? { embed: 0, layers: new Array(nLayers).fill(0), head: 0 } : null;
    this.deferred = Boolean(engine.deferred);
    this.pending = [];
    this.since = null;  // deferred: when the first unsettled pass was recorded
    this.batches = 0;
  }

  _addTo(times, stage, ms) {
    if (stage === "embed" || stage === "head") times[stage] += ms;
    else times.layers[stage] += ms;
  }

  add(stage, ms) {
    checkStage(stage, this.nLayers);
    this._addTo(this.wall, stage, ms);
  }

  /** One compute pass timed as part of `stage`; its GPU time is read back later. */
  async stage(stage, record) {
    checkStage(stage, this.nLayers);
    if (this.gpu && this.pending.length === QUERY_PAIRS) await this.settle();
    const pair = this.gpu ? this.pending.push(stage) - 1 : null;
    if (!this.deferred) {
      this._addTo(this.wall, stage, await this.engine.stage(record, pair));
      return;
    }
    this.since ??= now();
    await this.engine.defer(record, pair);
  }

  batch() {
    this.batches++;
  }

  /** Await the recorded passes and book their times (wall shares and GPU times). */
  async settle() {
    if (!this.pending.length) return;
    await this.engine.settle();
    const wall = this.since === null ? 0 : now() - this.since;
    const ms = await this.engine.timestamps.durations(this.pending.length);
    const gpuTotal = ms.reduce((a, b) => a + b, 0);
    this.pending.forEach((stage, i) => {
      this._addTo(this.gpu, stage, ms[i]);
      if (this.deferred) {
        this._addTo(this.wall, stage, gpuTotal > 0 ? (wall * ms[i]) / gpuTotal : wall / this.pending.length);
      }
    });
    this.pending = [];
    this.since = null;
  }

  async finish() {
    const sum = (t) => t.embed + t.layers.reduce((a, b) => a + b, 0) + t.head;
    await this.settle();
    return { ...this.wall, total: sum(this.wall), batches: this.batches, deferred: this.deferred,
      gpu: this.gpu && { ...this.gpu, total: sum(this.gpu) } };
  }
}
