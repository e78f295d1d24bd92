// Python's random.Random lives in ../pyrandom.js (shared by the wrappers' ensembles); this
// module keeps TabICL's old import path.
export { PyRandom, bitLength } from "../pyrandom.js";
