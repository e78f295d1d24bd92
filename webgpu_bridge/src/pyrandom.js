// Python's `random.Random(seed)` bit for bit (CPython 3.11's _randommodule.c and random.py):
// the Mersenne Twister MT19937 seeded by init_by_array with the seed's 32-bit words (its
// absolute value, least significant word first), `random()` from two draws (a >> 5, b >> 6),
// `getrandbits`, `_randbelow` (getrandbits(k) redrawn until below n), and `choice`,
// `shuffle`, `sample` with random.py's algorithms. The wrappers' draws use it
// (wrapper_ensemble.js, TabICL's and Google TabFM's ensembles).

const N = 624;
const M = 397;

/** The bit length of a non-negative integer (Python's int.bit_length()). */
function bitLength(n) {
  return n < 2 ** 32 ? 32 - Math.clz32(n) : n.toString(2).length;
}

export class PyRandom {
  /** `seed`: a (possibly negative, possibly BigInt) integer, or null for an OS-random seed. */
  constructor(seed = null) {
    this.mt = new Uint32Array(N);
    this.index = N + 1;
    this.seed(seed);
  }

  seed(seed) {
    if (seed === null || seed === undefined) {
      const words = new Uint32Array(N);
      globalThis.crypto.getRandomValues(words);
      this.initByArray(words);
      return;
    }
    if (typeof seed !== "bigint" && !Number.isInteger(seed)) {
      throw new TypeError(`the seed must be an integer or null, got ${seed}`);
    }
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.initByArray(key);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) >>> 0;
      i++;
      j++;
      if (i >= N) { mt[0] = mt[N - 1]; i = 1; }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) { mt[0] = mt[N - 1]; i = 1; }
    }
    mt[0] = 0x80000000;
    this.index = N;
  }

  twist() {
    const mt = this.mt;
    for (let kk = 0; kk < N; kk++) {
      const y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7fffffff);
      mt[kk] = (mt[(kk + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    this.index = 0;
  }

  /** genrand_uint32: the next 32-bit output. */
  uint32() {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** random(): a float in [0, 1) with 53 random bits. */
  random() {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** getrandbits(k): a number for k ≤ 53, a BigInt above. */
  getrandbits(k) {
    if (!Number.isInteger(k) || k < 0) throw new RangeError("number of bits must be non-negative");
    if (k === 0) return 0;
    if (k <= 32) return this.uint32() >>> (32 - k);
    let out = 0n;
    for (let i = 0, left = k; left > 0; i++, left -= 32) {
      let r = this.uint32();
      if (left < 32) r >>>= 32 - left;
      out |= BigInt(r) << BigInt(32 * i);
    }
    return k <= 53 ? Number(out) : out;
  }

  /** _randbelow_with_getrandbits(n), 0 < n < 2^53. */
  randbelow(n) {
    const k = bitLength(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  choice(seq) {
    if (!seq.length) throw new RangeError("Cannot choose from an empty sequence");
    return seq[this.randbelow(seq.length)];
  }

  /** shuffle(x) in place. */
  shuffle(x) {
    for (let i = x.length - 1; i >= 1; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }

  /** sample(population, k): k distinct picks in selection order (random.py's two strategies). */
  sample(population, k) {
    const n = population.length;
    if (!(k >= 0 && k <= n)) throw new RangeError("Sample larger than population or is negative");
    const result = new Array(k);
    let setsize = 21;
    if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
    if (n <= setsize) {
      const pool = [...population];
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j];
        pool[j] = pool[n - i - 1];
      }
    } else {
      const selected = new Set();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = population[j];
      }
    }
    return result;
  }
}

export { bitLength };
