import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisGuard } from '../redis.js';

/** One request counted in a fixed window: the count so far in the window, and when it ends. */
export interface Hit {
  count: number;
  /** Milliseconds until the window ends and the count starts again from zero. */
  resetMs: number;
}

/**
 * Fixed-window counters. A bucket's window starts with its first request and lasts `windowMs`;
 * every request in it (allowed or not) adds one. Keys are complete (prefix included).
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number): Promise<Hit>;
  /**
   * Takes one request back out of a bucket's current window (a request whose credential turned out
   * to be refused, platform/auth/credential-check.ts); nothing when the window has ended.
   */
  refund(key: string): Promise<void>;
}

/** Counters in this process: for a single instance, and the fallback while Redis is unreachable. */
export function createMemoryStore(now: () => number = Date.now): RateLimitStore & { size(): number } {
  const buckets = new Map<string, { count: number; resetAt: number }>();
  let nextSweep = 0;
  return {
    async hit(key, windowMs) {
      const t = now();
      // Ended windows are dropped every few seconds, so the map holds only live buckets.
      if (t >= nextSweep) {
        for (const [k, bucket] of buckets) if (bucket.resetAt <= t) buckets.delete(k);
        nextSweep = t + 5000;
      }
      let bucket = buckets.get(key);
      if (!bucket || bucket.resetAt <= t) {
        bucket = { count: 0, resetAt: t + windowMs };
        buckets.set(key, bucket);
      }
      bucket.count += 1;
      return { count: bucket.count, resetMs: bucket.resetAt - t };
    },
    async refund(key) {
      const bucket = buckets.get(key);
      if (bucket && bucket.resetAt > now() && bucket.count > 0) bucket.count -= 1;
    },
    size: () => buckets.size,
  };
}

/**
 * INCR, and on the window's first request PEXPIRE, in one atomic step; a key that somehow has no
 * expiry gets one. Returns the count and the milliseconds left (Redis's clock, so instances with
 * skewed clocks still agree on the window).
 */
export const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;
const HIT_SCRIPT_SHA = createHash('sha1').update(HIT_SCRIPT).digest('hex');

/** DECR only a live window's counter: an ended window's key is gone, and must not come back at -1. */
export const REFUND_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]))
if count and count > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;

export interface RedisStoreOptions {
  /** Where counts go while Redis does not answer (this instance's memory). */
  fallback: RateLimitStore;
  /** Told once when Redis stops answering, and once when it answers again. */
  onUnavailable?: (error: unknown) => void;
  onRecovered?: () => void;
}

/**
 * Counters in Redis, shared by every instance. When Redis is unreachable, slow or failing, the
 * request is not refused for it: it is counted in this instance's memory instead (the budget then
 * holds per instance rather than for the deployment) until Redis answers again. The guard gives
 * every call its deadline and skips Redis entirely while its breaker is open (platform/redis.ts).
 */
export function createRedisStore(guard: RedisGuard, options: RedisStoreOptions): RateLimitStore & { readonly degraded: boolean } {
  let degraded = false;

  async function run(redis: Redis, key: string, windowMs: number): Promise<Hit> {
    let result: unknown;
    try {
      result = await redis.evalsha(HIT_SCRIPT_SHA, 1, key, windowMs);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      result = await redis.eval(HIT_SCRIPT, 1, key, windowMs);
    }
    const [count, ttl] = result as [number, number];
    return { count: Number(count), resetMs: Math.max(1, Number(ttl)) };
  }

  return {
    get degraded() {
      return degraded;
    },
    async hit(key, windowMs) {
      try {
        const hit = await guard.run('rate-limit', (redis) => run(redis, key, windowMs));
        if (degraded) {
          degraded = false;
          options.onRecovered?.();
        }
        return hit;
      } catch (error) {
        if (!degraded) {
          degraded = true;
          options.onUnavailable?.(error);
        }
        return options.fallback.hit(key, windowMs);
      }
    },
    async refund(key) {
      try {
        await guard.run('rate-limit', (redis) => redis.eval(REFUND_SCRIPT, 1, key));
      } catch {
        // Counted in this instance's memory while Redis did not answer, perhaps; else nothing there.
        await options.fallback.refund(key);
      }
    },
  };
}
