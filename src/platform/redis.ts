import { Redis } from 'ioredis';

/**
 * Redis is an optimisation here (shared rate-limit counters, the shared availability cache), never
 * a dependency of an answer. Two parts keep it so:
 *  - the client never queues a command while disconnected (it fails at once) and reconnects on
 *    its own in the background;
 *  - every call goes through a guard with a short deadline and a circuit breaker: after a few
 *    failures in a row Redis is not asked at all for a cool-down period, then one call probes it.
 * Callers decide what a failure means (count in memory, compute instead of reading the cache).
 */

export interface RedisSettings {
  /** Deadline of one call, in milliseconds. */
  timeoutMs: number;
  /** Consecutive failures that open the breaker. */
  breakerFailures: number;
  /** How long an open breaker skips Redis before one call probes it again. */
  breakerCooldownMs: number;
}

/** A client set up for that: no offline queue, no per-command retries, a background reconnect. */
export function createRedisClient(url: string, options: { timeoutMs: number; onError?: (error: Error) => void }): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(1000, options.timeoutMs * 10),
    // Reconnect for ever, never more than two seconds apart: Redis coming back is picked up unaided.
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  // Without a listener, ioredis prints every connection error; with one, it is ours to log (once per
  // outage, by the guard's owner) and never an unhandled 'error' event.
  redis.on('error', options.onError ?? (() => {}));
  return redis;
}

export class RedisUnavailableError extends Error {}

export interface RedisGuard {
  /** Runs one Redis call within the deadline, or rejects at once while the breaker is open. */
  run<T>(operation: string, call: (redis: Redis) => Promise<T>): Promise<T>;
  /** True while Redis is being skipped. */
  readonly open: boolean;
}

export interface RedisGuardHooks {
  /** Every failed call (for metrics). */
  onFailure?: (operation: string, error: unknown) => void;
  /** The breaker opened (Redis is skipped from now) or closed again. */
  onOpen?: (error: unknown) => void;
  onClose?: () => void;
}

export function createRedisGuard(redis: Redis, settings: RedisSettings, hooks: RedisGuardHooks = {}, now: () => number = Date.now): RedisGuard {
  let failures = 0;
  let openUntil = 0;
  let isOpen = false;
  let probing = false;

  function fail(operation: string, error: unknown): never {
    failures += 1;
    hooks.onFailure?.(operation, error);
    if (failures >= settings.breakerFailures) {
      openUntil = now() + settings.breakerCooldownMs;
      if (!isOpen) {
        isOpen = true;
        hooks.onOpen?.(error);
      }
    }
    throw error instanceof Error ? error : new RedisUnavailableError(String(error));
  }

  return {
    get open() {
      return isOpen;
    },
    async run(operation, call) {
      const half = isOpen && now() >= openUntil;
      if (isOpen && (!half || probing)) {
        // Counted as a failure of this operation (it did not reach Redis), without extending the cool-down.
        const skipped = new RedisUnavailableError('Redis is skipped for a while after failing');
        hooks.onFailure?.(operation, skipped);
        throw skipped;
      }
      if (half) probing = true;
      let timer: NodeJS.Timeout | undefined;
      try {
        // A command on a connection that is down fails at once (no offline queue); a slow one is
        // abandoned at the deadline (its late answer is ignored).
        if (redis.status !== 'ready') throw new RedisUnavailableError(`Redis is ${redis.status}`);
        const result = await Promise.race([
          call(redis),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new RedisUnavailableError(`Redis did not answer within ${settings.timeoutMs} ms`)), settings.timeoutMs);
          }),
        ]);
        failures = 0;
        if (isOpen) {
          isOpen = false;
          hooks.onClose?.();
        }
        return result;
      } catch (error) {
        return fail(operation, error);
      } finally {
        clearTimeout(timer);
        if (half) probing = false;
      }
    },
  };
}
