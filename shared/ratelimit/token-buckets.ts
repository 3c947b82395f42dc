import { native } from '../native/index.js';

/**
 * Token buckets that the whole tree shares, as Envoy's local rate limits are shared by all of its
 * worker threads: one 64-bit slot per bucket in memory every worker maps (the addon's mapShared).
 *
 * A bucket is kept as Envoy's AtomicTokenBucketImpl keeps it: not a count but the instant (on the
 * system's monotonic clock, the same in every process) at which it would have been empty. The
 * tokens at `now` are `min(max, (now - instant) × rate)`; taking one moves the instant forward by
 * `1 / rate`, with a compare-and-swap so that two workers taking the last token at once cannot
 * both have it. Nothing refills: the clock does. A new bucket's instant is as far in the past
 * as a slot can say (FULL), so it starts full whatever its size and however long the machine has
 * been up.
 */

/** Whole microseconds on CLOCK_MONOTONIC (libuv's hrtime), which every process on the machine shares. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export interface BucketShape {
  maxTokens: number;
  /** Tokens per second: tokens_per_fill / fill_interval (what orders descriptors' buckets). */
  rate: number;
  /** Microseconds per token, fill_interval / tokens_per_fill: dividing by it keeps whole tokens whole. */
  period: number;
}

/** Envoy's TokenBucket message as a shape (tokens_per_fill defaults to 1). */
export function bucketShape(tokenBucket: { max_tokens?: unknown; tokens_per_fill?: unknown; fill_interval?: unknown }, fillIntervalMs: number): BucketShape {
  const perFill = tokenBucket.tokens_per_fill === undefined ? 1 : Number(tokenBucket.tokens_per_fill);
  const rate = fillIntervalMs > 0 ? perFill / (fillIntervalMs / 1000) : 0;
  return { maxTokens: Number(tokenBucket.max_tokens ?? 0), rate, period: rate > 0 ? (fillIntervalMs * 1000) / perFill : Number.POSITIVE_INFINITY };
}

/** The empty instant of a full bucket: the earliest a Number holds exactly. */
const FULL = -Number.MAX_SAFE_INTEGER;

/** A token short by less than this (rounding of a period that is not a whole microsecond) is a token. */
const EPSILON = 1e-6;

/**
 * Where a bucket's state lives (its empty instant, in whole microseconds: exact as a Number for
 * centuries of uptime): a slot of the tree's region, or a number of one process (a connection's).
 */
export interface BucketState {
  load(): number;
  /** Sets `next` if the state is still `expected`; false when another worker changed it first. */
  swap(expected: number, next: number): boolean;
}

export interface BucketView {
  /** Takes `tokens` if there are that many: false leaves the bucket as it was. */
  consume(tokens?: number): boolean;
  remaining(): number;
  /** Seconds until the next whole token (0 when one is there now). */
  nextTokenIn(): number;
  readonly shape: BucketShape;
}

export class TokenBucket implements BucketView {
  constructor(
    private readonly state: BucketState,
    readonly shape: BucketShape,
  ) {}

  consume(tokens = 1): boolean {
    const { maxTokens, period } = this.shape;
    if (!Number.isFinite(period)) return false;
    const now = monotonicMicros();
    for (;;) {
      const old = this.state.load();
      const available = Math.min(maxTokens, (now - old) / period);
      if (available + EPSILON < tokens) return false;
      // The bucket's empty instant after taking them: earlier than now by what is left.
      if (this.state.swap(old, now - Math.round(Math.max(0, available - tokens) * period))) return true;
    }
  }

  remaining(): number {
    const { maxTokens, period } = this.shape;
    const tokens = Math.max(0, Math.min(maxTokens, (monotonicMicros() - this.state.load()) / period));
    return tokens + EPSILON >= Math.ceil(tokens) ? Math.ceil(tokens) : tokens;
  }

  nextTokenIn(): number {
    const left = this.remaining();
    return left >= 1 || this.shape.rate <= 0 ? 0 : ((1 - left) * this.shape.period) / 1e6;
  }
}

/** A bucket of one process (a connection's own): a plain number. */
export class LocalBucketState implements BucketState {
  private value = FULL;
  load(): number {
    return this.value;
  }
  swap(expected: number, next: number): boolean {
    if (this.value !== expected) return false;
    this.value = next;
    return true;
  }
}

/** How many buckets a tree's region holds: a sparse file, so only the pages in use take memory. */
export const BUCKET_CAPACITY = 65536;

/** The tree's region of buckets: 64-bit integers (BigInt64), so that Atomics can compare and swap them. */
export class TreeBuckets {
  private readonly slots: BigInt64Array;

  constructor(buffer: ArrayBuffer) {
    this.slots = new BigInt64Array(buffer, 0, BUCKET_CAPACITY);
  }

  /** Opens the region a worker inherited (`/proc/self/fd/<fd>`). */
  static open(fd: number): TreeBuckets {
    return new TreeBuckets(native.mapShared(`/proc/self/fd/${fd}`, BUCKET_CAPACITY * 8, false));
  }

  static readonly bytes = BUCKET_CAPACITY * 8;

  state(slot: number): BucketState {
    if (!Number.isInteger(slot) || slot < 0 || slot >= BUCKET_CAPACITY) throw new Error(`token bucket slot ${slot} is outside the region (${BUCKET_CAPACITY} slots)`);
    const slots = this.slots;
    return {
      load: () => Number(Atomics.load(slots, slot)),
      swap: (expected, next) => {
        const before = BigInt(expected);
        return Atomics.compareExchange(slots, slot, before, BigInt(next)) === before;
      },
    };
  }

  /** A slot given to a new bucket starts full. */
  reset(slot: number): void {
    Atomics.store(this.slots, slot, BigInt(FULL));
  }
}

let tree: TreeBuckets | undefined;

/** A worker opens the tree's region at its start. */
export function useTreeBuckets(buckets: TreeBuckets): void {
  tree = buckets;
}

export function treeBuckets(): TreeBuckets {
  if (!tree) throw new Error("the tree's token-bucket region is not open in this process");
  return tree;
}
