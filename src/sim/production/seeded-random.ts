/** A uniform random source in [0, 1). */
export type Random = () => number

/** Mulberry32: small, fast and good enough for simulated misses; the same seed gives the same draws. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A 32-bit seed from a seed and a name (FNV-1a), so each machine of one run draws its own sequence. */
export function seedFor(seed: number, name: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0
  return hash
}
