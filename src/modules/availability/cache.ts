import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzipSync, gzip as gzipCallback } from 'node:zlib';
import type { RedisGuard } from '../../platform/redis.js';

const gzip = promisify(gzipCallback);

/**
 * The availability cache. A search result depends on one location, one service, some resources
 * and perhaps one customer. Each of those has a version; a write that can change slot generation
 * bumps the versions of exactly the records it touches (an appointment: its resources, its service
 * for the daily limits, its customer; a block: its scope; a schedule change: that record). A cached
 * result is keyed by the search plus the versions it was computed from, so a bump makes every
 * dependent entry unreachable at once and nothing else.
 *
 * Searches run with `now` floored to the minute whether or not the cache is used, and the minute
 * is part of the key, so the cache never changes an answer; entries live two minutes.
 *
 * Shared through Redis when REDIS_URL is set (every instance sees every bump), in process otherwise.
 *
 * Answers are kept gzip-compressed (issue 18): a 7-day answer for 50 resources is about 400 KB of
 * JSON, mostly repeated resource ids, and a fiftieth of that compressed (Redis keeps only the
 * compressed bytes; the process's own cache keeps the text too). A cached search whose
 * client accepts gzip is sent those bytes as they are (writing and reading 400 KB was most of a
 * cached search's time); any other client gets the text back. Each entry is compressed once, off
 * the request's path (zlib's thread pool): `set` returns at once, and a `get` of the same key in
 * this instance waits for it, so a search right after another is still a hit.
 */
export type EntityKind = 'location' | 'service' | 'resource' | 'customer';

export interface TouchedEntities {
  locations?: string[];
  services?: string[];
  resources?: string[];
  customers?: string[];
}

/** A cached answer: its JSON bytes gzip-compressed, and the bytes themselves where they are kept too. */
export class CachedAnswer {
  constructor(
    readonly gzip: Buffer,
    private readonly body?: Buffer,
  ) {}

  /** The JSON bytes, for a client that does not accept gzip. */
  bytes(): Buffer {
    return this.body ?? gunzipSync(this.gzip);
  }

  /** The JSON text, for callers that read the answer. */
  text(): string {
    return this.bytes().toString('utf8');
  }
}

/** Compressions still running, by key, so a `get` right after a `set` finds the entry. */
function pendingWrites() {
  const pending = new Map<string, Promise<void>>();
  return {
    add(key: string, write: Promise<void>): Promise<void> {
      pending.set(key, write);
      return write.finally(() => {
        if (pending.get(key) === write) pending.delete(key);
      });
    },
    async settled(key: string): Promise<void> {
      await pending.get(key);
    },
    /** Every write still running, so that closing waits for them instead of cutting Redis under them. */
    async drain(): Promise<void> {
      await Promise.all(pending.values());
    },
  };
}

export interface AvailabilityCache {
  /** Invalidates every cached search that depends on any of these records. */
  touch(companyId: string, entities: TouchedEntities): Promise<void>;
  /** The cache key of a search: the search plus the versions of what it depends on. */
  keyFor(companyId: string, entities: TouchedEntities, search: unknown): Promise<string>;
  get(key: string): Promise<CachedAnswer | null>;
  /** Stores an answer's JSON bytes (compressed off the request's path); never rejects. */
  set(key: string, body: Buffer): Promise<void>;
  close(): Promise<void>;
}

const ENTRY_TTL_SECONDS = 120;

function versionKeys(companyId: string, entities: TouchedEntities): string[] {
  const keys: string[] = [];
  const add = (kind: EntityKind, ids: string[] | undefined) => {
    for (const id of ids ?? []) keys.push(`slotwise:v:${companyId}:${kind}:${id}`);
  };
  add('location', entities.locations);
  add('service', entities.services);
  add('resource', entities.resources);
  add('customer', entities.customers);
  return keys;
}

function digest(versions: Array<string | number | null>, search: unknown): string {
  return createHash('sha256').update(JSON.stringify([versions, search])).digest('base64url');
}

/**
 * The bytes in a buffer of their own when their buffer is more than twice their size: a small
 * Buffer (under 4 KB: a compact answer, most gzipped ones) is a slice of Node.js's shared 8 KB pool,
 * and an answer's buffer may be larger than its bytes (answer-bytes.ts grows it); an entry kept for
 * two minutes would keep all of it. The one place answers are kept, so the one place this is done.
 */
function ownBytes(bytes: Buffer): Buffer {
  if (bytes.buffer.byteLength <= bytes.length * 2) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}

export function createMemoryAvailabilityCache(maxEntries = 5000): AvailabilityCache {
  const versions = new Map<string, number>();
  const entries = new Map<string, { value: CachedAnswer; expires: number }>();
  const writes = pendingWrites();
  return {
    async touch(companyId, entities) {
      for (const key of versionKeys(companyId, entities)) versions.set(key, (versions.get(key) ?? 0) + 1);
    },
    async keyFor(companyId, entities, search) {
      const keys = versionKeys(companyId, entities);
      return `slotwise:az:${companyId}:${digest(keys.map((k) => versions.get(k) ?? 0), search)}`;
    },
    async get(key) {
      await writes.settled(key);
      const entry = entries.get(key);
      if (!entry) return null;
      if (entry.expires < Date.now()) {
        entries.delete(key);
        return null;
      }
      return entry.value;
    },
    set(key, body) {
      const write = gzip(body).then((compressed) => {
        // Maps iterate in insertion order: dropping the first key evicts the oldest entry.
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
        // The answer's bytes are kept beside the compressed ones: decompressing a month's answer for
        // a client that does not take gzip cost more than the cache saved it (they are there anyway).
        entries.set(key, { value: new CachedAnswer(ownBytes(compressed), ownBytes(body)), expires: Date.now() + ENTRY_TTL_SECONDS * 1000 });
      });
      return writes.add(key, write);
    },
    close: () => writes.drain(),
  };
}

/**
 * Redis never fails or delays a request beyond its deadline: every call goes through the guard
 * (platform/redis.ts: a short deadline, a breaker that skips Redis while it fails). A search that
 * cannot reach it is computed (and not stored); a write whose bump cannot reach it still succeeds
 * (it committed), and its dependent answers then live out their two minutes. Failures are told to
 * `onError` (logged, and counted in /metrics as slotwise_redis_failures_total).
 */
export function createRedisAvailabilityCache(guard: RedisGuard, onError: (error: unknown, operation: string) => void = () => {}): AvailabilityCache {
  const NO_KEY = '';
  const writes = pendingWrites();
  return {
    async touch(companyId, entities) {
      const keys = versionKeys(companyId, entities);
      if (keys.length === 0) return;
      try {
        // Separate INCRs rather than a pipeline: a pipeline reports a failed command inside its
        // result instead of rejecting, which once hid every failed bump.
        await guard.run('cache-touch', (redis) => Promise.all(keys.map((key) => redis.incr(key))));
      } catch (error) {
        onError(error, 'touch');
      }
    },
    async keyFor(companyId, entities, search) {
      const keys = versionKeys(companyId, entities);
      try {
        const values = keys.length ? await guard.run('cache-versions', (redis) => redis.mget(...keys)) : [];
        // "az": compressed answers; an instance of an earlier version, during a rolling deploy,
        // kept JSON text under "a" and never reads these.
        return `slotwise:az:${companyId}:${digest(values, search)}`;
      } catch (error) {
        onError(error, 'keyFor');
        return NO_KEY;
      }
    },
    async get(key) {
      if (key === NO_KEY) return null;
      await writes.settled(key);
      const stored = await guard.run('cache-get', (redis) => redis.getBuffer(key)).catch((error: unknown) => {
        onError(error, 'get');
        return null;
      });
      if (!stored) return null;
      // Not gzip (another writer, or damage): a miss, never a 500 when it is decompressed or
      // garbage sent as gzip. Computing the answer again stores it afresh.
      if (stored.length < 2 || stored[0] !== 0x1f || stored[1] !== 0x8b) {
        onError(new Error(`not a gzip stream at ${key}`), 'get');
        return null;
      }
      return new CachedAnswer(stored);
    },
    set(key, body) {
      if (key === NO_KEY) return Promise.resolve();
      const write = gzip(body)
        .then((compressed) => guard.run('cache-set', (redis) => redis.set(key, compressed, 'EX', ENTRY_TTL_SECONDS)))
        .then(
          () => {},
          (error: unknown) => onError(error, 'set'),
        );
      return writes.add(key, write);
    },
    close: () => writes.drain(),
  };
}

/** A cache that never holds anything (AVAILABILITY_CACHE=false): every search is computed. */
export function createDisabledAvailabilityCache(): AvailabilityCache {
  return {
    async touch() {},
    async keyFor() {
      return '';
    },
    async get() {
      return null;
    },
    async set() {},
    async close() {},
  };
}
