// numpy's `np.random.default_rng(seed)` bit for bit, for the split maker (make_splits.js):
// SeedSequence (numpy/random/bit_generator.pyx: entropy as uint32 words, pool of 4 words,
// hashmix / mix), PCG64 (numpy/random/src/pcg64: a 128-bit LCG, XSL-RR output, step then
// output; seeded by pcg_setseq_128_srandom_r(initstate = words 0..1, initseq = words 2..3)
// of generate_state(4, uint64), word 0 the high half), next_uint32's buffering (a 64-bit
// draw gives its low 32 bits, and keeps the high 32 for the next 32-bit draw), and
// Generator.permutation(n) = shuffle of arange(n) with distributions.c `random_interval`.
//
// The 128-bit state lives in eight 16-bit limbs held as plain Numbers: every partial
// product is below 2^32 and every column sum below 2^36, so the multiply is exact without
// BigInt (a 1.2-million-row permutation takes tens of milliseconds).

const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const XSHIFT = 16;
const POOL_SIZE = 4;
const TWO32 = 2 ** 32;

/** PCG64's multiplier 0x2360ed051fc65da44385df649fccf645, 16-bit limbs, low first. */
const M = [0xf645, 0x9fcc, 0xdf64, 0x4385, 0x5da4, 0x1fc6, 0xed05, 0x2360];

/** A non-negative integer seed (Number or BigInt) as numpy's uint32 entropy words. */
export function entropyWords(seed) {
  let n;
  if (typeof seed === "bigint") n = seed;
  else if (Number.isSafeInteger(seed)) n = BigInt(seed);
  else throw new TypeError(`seed must be a non-negative integer, got ${seed}`);
  if (n < 0n) throw new RangeError(`seed must be a non-negative integer, got ${seed}`);
  if (n === 0n) return [0];
  const words = [];
  while (n > 0n) {
    words.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  return words;
}

/** numpy.random.SeedSequence(seed) (no spawn key): its pool and generate_state. */
export class SeedSequence {
  constructor(seed) {
    this.entropy = seed;
    this.pool = mixEntropy(entropyWords(seed));
  }

  /** generate_state(nWords, uint32): the words as a Uint32Array. */
  generateState32(nWords) {
    const state = new Uint32Array(nWords);
    let hashConst = INIT_B;
    for (let i = 0; i < nWords; i++) {
      let value = (this.pool[i % POOL_SIZE] ^ hashConst) >>> 0;
      hashConst = Math.imul(hashConst, MULT_B) >>> 0;
      value = Math.imul(value, hashConst) >>> 0;
      state[i] = (value ^ (value >>> XSHIFT)) >>> 0;
    }
    return state;
  }

  /** generate_state(nWords, uint64) as BigInts (each word: uint32 2k low, 2k+1 high). */
  generateState64(nWords) {
    const w = this.generateState32(2 * nWords);
    return Array.from({ length: nWords }, (_, k) => (BigInt(w[2 * k + 1]) << 32n) | BigInt(w[2 * k]));
  }
}

function hashmix(value, hash) {
  value = (value ^ hash.c) >>> 0;
  hash.c = Math.imul(hash.c, MULT_A) >>> 0;
  value = Math.imul(value, hash.c) >>> 0;
  return (value ^ (value >>> XSHIFT)) >>> 0;
}

function mix(x, y) {
  const result = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
  return (result ^ (result >>> XSHIFT)) >>> 0;
}

function mixEntropy(entropy) {
  const mixer = new Uint32Array(POOL_SIZE);
  const hash = { c: INIT_A };
  for (let i = 0; i < POOL_SIZE; i++) mixer[i] = hashmix(i < entropy.length ? entropy[i] : 0, hash);
  for (let src = 0; src < POOL_SIZE; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) {
      if (src !== dst) mixer[dst] = mix(mixer[dst], hashmix(mixer[src], hash));
    }
  }
  for (let src = POOL_SIZE; src < entropy.length; src++) {
    for (let dst = 0; dst < POOL_SIZE; dst++) mixer[dst] = mix(mixer[dst], hashmix(entropy[src], hash));
  }
  return mixer;
}

/** A 128-bit BigInt as eight 16-bit limbs, low first. */
function limbsOf(value) {
  return Array.from({ length: 8 }, (_, k) => Number((value >> BigInt(16 * k)) & 0xffffn));
}

function bigOf(limbs) {
  return limbs.reduceRight((acc, limb) => (acc << 16n) | BigInt(limb), 0n);
}

const MASK128 = (1n << 128n) - 1n;

/** numpy.random.PCG64 seeded from a SeedSequence, with numpy's 32-bit draw buffer. */
export class PCG64 {
  constructor(seed) {
    const words = new SeedSequence(seed).generateState64(4);
    const initstate = (words[0] << 64n) | words[1];
    const initseq = (words[2] << 64n) | words[3];
    this.s = new Float64Array(8);
    this.inc = new Float64Array(limbsOf(((initseq << 1n) | 1n) & MASK128));
    this.step();
    this.s.set(limbsOf((bigOf(this.s) + initstate) & MASK128));
    this.step();
    this.hasUint32 = false;
    this.uinteger = 0;
    this.hi = 0;
    this.lo = 0;
  }

  /** `bit_generator.state` as numpy shows it (state and inc as BigInts). */
  get state() {
    return { bit_generator: "PCG64", state: { state: bigOf(this.s), inc: bigOf(this.inc) },
      has_uint32: this.hasUint32 ? 1 : 0, uinteger: this.uinteger };
  }

  /** state = state * M + inc (mod 2^128). */
  step() {
    const s = this.s;
    const inc = this.inc;
    const s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5], s6 = s[6], s7 = s[7];
    let c = s0 * M[0] + inc[0];
    let carry = Math.floor(c / 65536);
    s[0] = c - carry * 65536;
    c = s0 * M[1] + s1 * M[0] + inc[1] + carry;
    carry = Math.floor(c / 65536);
    s[1] = c - carry * 65536;
    c = s0 * M[2] + s1 * M[1] + s2 * M[0] + inc[2] + carry;
    carry = Math.floor(c / 65536);
    s[2] = c - carry * 65536;
    c = s0 * M[3] + s1 * M[2] + s2 * M[1] + s3 * M[0] + inc[3] + carry;
    carry = Math.floor(c / 65536);
    s[3] = c - carry * 65536;
    c = s0 * M[4] + s1 * M[3] + s2 * M[2] + s3 * M[1] + s4 * M[0] + inc[4] + carry;
    carry = Math.floor(c / 65536);
    s[4] = c - carry * 65536;
    c = s0 * M[5] + s1 * M[4] + s2 * M[3] + s3 * M[2] + s4 * M[1] + s5 * M[0] + inc[5] + carry;
    carry = Math.floor(c / 65536);
    s[5] = c - carry * 65536;
    c = s0 * M[6] + s1 * M[5] + s2 * M[4] + s3 * M[3] + s4 * M[2] + s5 * M[1] + s6 * M[0] +
      inc[6] + carry;
    carry = Math.floor(c / 65536);
    s[6] = c - carry * 65536;
    c = s0 * M[7] + s1 * M[6] + s2 * M[5] + s3 * M[4] + s4 * M[3] + s5 * M[2] + s6 * M[1] +
      s7 * M[0] + inc[7] + carry;
    s[7] = c % 65536;
  }

  /** One 64-bit draw (step, then XSL-RR) into this.hi / this.lo (uint32 halves). */
  draw() {
    this.step();
    const s = this.s;
    let hi = ((s[7] << 16) | s[6]) ^ ((s[3] << 16) | s[2]);
    let lo = ((s[5] << 16) | s[4]) ^ ((s[1] << 16) | s[0]);
    let rot = s[7] >>> 10;
    if (rot >= 32) {
      const t = hi;
      hi = lo;
      lo = t;
      rot -= 32;
    }
    if (rot) {
      const h = (hi >>> rot) | (lo << (32 - rot));
      lo = (lo >>> rot) | (hi << (32 - rot));
      hi = h;
    }
    this.hi = hi >>> 0;
    this.lo = lo >>> 0;
  }

  /** next_uint32: the low half of a fresh 64-bit draw, or the high half kept from the last. */
  nextUint32() {
    if (this.hasUint32) {
      this.hasUint32 = false;
      return this.uinteger;
    }
    this.draw();
    this.hasUint32 = true;
    this.uinteger = this.hi;
    return this.lo;
  }

  /** next_uint64 as a BigInt (the 32-bit buffer is left as it is, as in numpy). */
  nextUint64() {
    this.draw();
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** `bit_generator.random_raw(n)`: n 64-bit draws as BigInts. */
  randomRaw(n) {
    return Array.from({ length: n }, () => this.nextUint64());
  }
}

/** distributions.c `random_interval(max)`: a uniform integer in [0, max] by masked rejection. */
export function randomInterval(bitgen, max) {
  if (max === 0) return 0;
  if (max <= 0xffffffff) {
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    let value;
    do value = (bitgen.nextUint32() & mask) >>> 0; while (value > max);
    return value;
  }
  let bits = 33;
  while (2 ** bits <= max) bits++;
  const maskHi = 2 ** (bits - 32) - 1;
  let value;
  do {
    bitgen.draw();
    value = ((bitgen.hi & maskHi) >>> 0) * TWO32 + bitgen.lo;
  } while (value > max);
  return value;
}

/** numpy.random.Generator on PCG64: what the split maker draws. */
export class Generator {
  constructor(bitGenerator) {
    this.bitGenerator = bitGenerator;
  }

  /** Generator.permutation(n): arange(n) shuffled (i = n-1 … 1 swaps with random_interval(i)). */
  permutation(n) {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
    const out = n < 2 ** 31 ? new Int32Array(n) : new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = i;
    const g = this.bitGenerator;
    for (let i = n - 1; i > 0; i--) {
      const j = randomInterval(g, i);
      const t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
    return out;
  }

  /**
   * Generator.integers(low, high, size) of int64 (high exclusive; Lemire's method as numpy):
   * a Number for size null, else an array; BigInt low/high give BigInts (ranges past 2^53).
   */
  integers(low, high, size = null) {
    const big = typeof low === "bigint" || typeof high === "bigint";
    const rng = BigInt(high) - BigInt(low) - 1n;
    const one = () => {
      const v = BigInt(boundedUint64(this.bitGenerator, rng)) + BigInt(low);
      return big ? v : Number(v);
    };
    if (size === null) return one();
    return Array.from({ length: size }, one);
  }

  /** Generator.random(n): n doubles in [0, 1), (next_uint64 >> 11) / 2^53 each. */
  random(n) {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = Number(this.bitGenerator.nextUint64() >> 11n) / 9007199254740992;
    return out;
  }

  /**
   * Generator.choice(popSize, size, replace=False) without p, below numpy's tail-shuffle
   * cutoff (popSize ≤ 10000 or size ≤ popSize / 50): Floyd's algorithm, then the shuffle of
   * `_shuffle_int` (i = size-1 … 1 swaps with random_bounded_uint64(0, i)).
   */
  choiceWithoutReplacement(popSize, size) {
    if (size > popSize) throw new RangeError("Cannot take a larger sample than population when replace is False");
    if (popSize > 10000 && size > Math.floor(popSize / 50)) throw new RangeError("numpy's tail shuffle is not ported");
    const g = this.bitGenerator;
    const idx = new Array(size);
    const seen = new Set();
    for (let j = popSize - size; j < popSize; j++) {
      const val = boundedUint64(g, j);
      const pick = seen.has(val) ? j : val;
      seen.add(pick);
      idx[j - popSize + size] = pick;
    }
    for (let i = size - 1; i >= 1; i--) {
      const j = boundedUint64(g, i);
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    return idx;
  }
}

const U32 = 0xffffffffn;
const U64 = (1n << 64n) - 1n;

/** distributions.c `buffered_bounded_lemire_uint32` (no buffer): a uniform integer in [0, rng]. */
export function boundedLemire32(bitgen, rng) {
  const excl = BigInt(rng) + 1n;
  let m = BigInt(bitgen.nextUint32()) * excl;
  let leftover = m & U32;
  if (leftover < excl) {
    const threshold = (U32 - BigInt(rng)) % excl;
    while (leftover < threshold) {
      m = BigInt(bitgen.nextUint32()) * excl;
      leftover = m & U32;
    }
  }
  return Number(m >> 32n);
}

/** distributions.c `bounded_lemire_uint64`: a uniform BigInt in [0, rng] (rng a BigInt). */
export function boundedLemire64(bitgen, rng) {
  const excl = rng + 1n;
  let m = bitgen.nextUint64() * excl;
  let leftover = m & U64;
  if (leftover < excl) {
    const threshold = (U64 - rng) % excl;
    while (leftover < threshold) {
      m = bitgen.nextUint64() * excl;
      leftover = m & U64;
    }
  }
  return m >> 64n;
}

/** distributions.c `random_bounded_uint64(off 0, rng, use_masked false)`: [0, rng] (BigInt past 2^32). */
export function boundedUint64(bitgen, rng) {
  const r = BigInt(rng);
  if (r === 0n) return typeof rng === "bigint" ? 0n : 0;
  if (r <= U32) {
    const v = r === U32 ? bitgen.nextUint32() : boundedLemire32(bitgen, Number(r));
    return typeof rng === "bigint" ? BigInt(v) : v;
  }
  return r === U64 ? bitgen.nextUint64() : boundedLemire64(bitgen, r);
}

/** numpy.random.default_rng(seed) for a non-negative integer seed. */
export function defaultRng(seed) {
  return new Generator(new PCG64(seed));
}
