// What the TabICL-family wrappers' ensembles share: the JavaScript twin of
// pkg/arenalite/models/wrapper_ensemble.py. tabicl 2.2.0's Shuffler and Google tabfm
// 1.0.1's FeatureShuffler draw the members' feature permutations from their own
// random.Random(random_state) (../pyrandom.js, CPython's draws bit for bit) by the same
// rules, and both wrappers end with the same numpy softmax (float32 here, rounded after
// every step as numpy computes it).
import { pairwiseSum } from "./numpy_sum.js";
import { PyRandom } from "./pyrandom.js";

export const SHUFFLE_METHODS = Object.freeze(["none", "shift", "random", "latin"]);
/** Above this many features (or classes) a "latin" shuffle falls back to "random". */
export const MAX_ELEMENTS_FOR_LATIN = 4000;
export const SOFTMAX_TEMPERATURE = 0.9;
const f32 = Math.fround;

/** The package's random Latin square of 0 … n−1 drawn from `rng` (a PyRandom): its rows. */
export function latinSquare(n, rng) {
  const symbols = [...Array(n).keys()];
  const drawn = [];
  while (symbols.length > 1) {
    const sym = rng.choice(symbols);
    symbols.splice(symbols.indexOf(sym), 1);
    drawn.push(sym);
  }
  const square = [symbols];
  for (const sym of drawn.reverse()) {
    square.push([...square[0]]);
    for (let i = 0; i < square.length; i++) square[i].splice(i, 0, sym);
  }
  rng.shuffle(square);
  const trans = square[0].map((_, c) => square.map((row) => row[c]));
  rng.shuffle(trans);
  return trans;
}

function permutations(items) {
  if (items.length <= 1) return [items];
  return items.flatMap((first, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [first, ...rest]));
}

/** Shuffler(n, method, randomState).shuffle(nEstimators): the patterns (lists of indices). */
export function shufflePatterns(n, method, nEstimators, randomState) {
  const rng = new PyRandom(randomState);
  const indices = [...Array(n).keys()];
  if (n > MAX_ELEMENTS_FOR_LATIN && method === "latin") method = "random";
  if (method === "none" || nEstimators === 1) return [indices];
  if (method === "shift") return indices.map((i) => [...indices.slice(n - i), ...indices.slice(0, n - i)]);
  if (method === "random") {
    if (n <= 5) {
      const perms = permutations(indices);
      return rng.sample(perms, Math.min(nEstimators, perms.length));
    }
    return Array.from({ length: nEstimators }, () => rng.sample(indices, n));
  }
  return latinSquare(n, rng);
}

/** softmax(x / temperature) over rows of `c` values in float32, max-shifted (the wrappers' numpy one). */
export function softmax(data, c, temperature = SOFTMAX_TEMPERATURE) {
  const t = f32(temperature);
  const out = new Float32Array(data.length);
  for (let at = 0; at < data.length; at += c) {
    let max = -Infinity;
    for (let k = 0; k < c; k++) max = Math.max(max, f32(data[at + k] / t));
    for (let k = 0; k < c; k++) out[at + k] = Math.exp(f32(f32(data[at + k] / t) - max));
    const sum = pairwiseSum(out, at, c, 1, f32);
    for (let k = 0; k < c; k++) out[at + k] = f32(out[at + k] / sum);
  }
  return out;
}
