import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { DateTime } from 'luxon';
import type { Principal } from '../../platform/auth/principal.js';
import { validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { computeAvailability } from '../../domain/availability.js';
import type { AvailabilityResult } from '../../domain/availability.js';
import { allowedDurations } from '../../domain/service-rules.js';
import type { AvailabilityCache, CachedAnswer } from './cache.js';
import { availabilityAnswerBytes } from './answer-bytes.js';
import { engineInput, loadEngineInputs } from './inputs.js';
import type { EngineReads } from './inputs.js';
import { assertTargetOpen, loadTarget, namedResources } from './target.js';
import type { PreparedSearch, TargetReads } from './target.js';
import type { AvailabilitySearch, CompactAvailabilityResponse } from './schemas.js';

export type { AvailabilitySearch };
export type CompactAvailabilityResult = Static<typeof CompactAvailabilityResponse>;

export const MAX_SEARCH_DAYS = 31;

/** A small seeded generator, so a RANDOM pick is the same with and without the cache. */
function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0) || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}

export interface AvailabilityDeps {
  db: Db;
  repository: TargetReads & EngineReads;
  cache: AvailabilityCache;
  now?: () => number;
}

/** The dates and duration of a search, checked against the location's (or the given) zone and the service. */
/**
 * The local date of `nowMs` (floored to the minute by the caller) in a zone, remembered for the
 * minute: a Luxon DateTime in a zone cost half a millisecond of every search, cached ones included.
 */
const todayByZone = new Map<string, { minute: number; date: string }>();
function localToday(nowMs: number, zone: string): string {
  const known = todayByZone.get(zone);
  if (known?.minute === nowMs) return known.date;
  const date = DateTime.fromMillis(nowMs, { zone }).toISODate()!;
  // Bounded by the zones in use (IANA has about 600).
  todayByZone.set(zone, { minute: nowMs, date });
  return date;
}

function checkRange(search: AvailabilitySearch, target: { zone: string; service: PreparedSearch['service'] }, nowMs: number) {
  const reportZone = search.timezone ?? target.zone;
  const endDate = search.endDate ?? search.startDate;
  if (endDate < search.startDate) throw validationError('query', 'endDate', 'endDate must be on or after startDate', 'AVAILABILITY-100');
  // Calendar dates carry no zone: whole days between them by UTC arithmetic.
  const days = (Date.parse(endDate) - Date.parse(search.startDate)) / 86_400_000 + 1;
  if (days > MAX_SEARCH_DAYS) throw validationError('query', 'endDate', `A search covers at most ${MAX_SEARCH_DAYS} days`);
  const today = localToday(nowMs, reportZone);
  if (search.startDate < today) {
    const whose = search.timezone ? `today in ${reportZone}` : 'the location\'s local date';
    throw validationError('query', 'startDate', `startDate must be on or after ${whose} (${today})`, 'AVAILABILITY-102');
  }
  const durations = allowedDurations(target.service);
  const duration = search.duration ?? target.service.duration;
  if (!durations.includes(duration)) {
    throw validationError('query', 'duration', `duration must be one of the service's options: ${durations.join(', ')}`, 'AVAILABILITY-105');
  }
  return { endDate, duration };
}

/**
 * The answer with `format=compact`: with 50 resources and round robin NONE every slot repeats up to
 * 50 ids; here each id is written once and a slot lists positions in `resources` (docs/api.md).
 */
export function compactAnswer(result: AvailabilityResult): CompactAvailabilityResult {
  const ids = new Set<string>();
  for (const slot of result.availableTimes) for (const id of slot.resourceIds) ids.add(id);
  const resources = [...ids].sort();
  const indexOf = new Map(resources.map((id, index) => [id, index]));
  return {
    timezoneName: result.timezoneName,
    resources,
    availableTimes: result.availableTimes.map(({ resourceIds, ...slot }) => ({
      startTime: slot.startTime,
      endTime: slot.endTime,
      resourceIndexes: resourceIds.map((id) => indexOf.get(id)!),
      remaining: slot.remaining,
    })),
    availableDays: result.availableDays,
  };
}

export interface SearchOptions {
  /** Public booking pages see only services with showOnline. */
  onlineOnly?: boolean;
}

/** An answer just computed (JSON as UTF-8 bytes), or one from the cache (its gzip bytes, and its bytes where kept). */
export type SearchAnswer = { body: Buffer } | { cached: CachedAnswer };

export function createAvailabilityService(deps: AvailabilityDeps) {
  const { repository } = deps;
  const clock = deps.now ?? Date.now;

  /** Validates the search and loads what the engine needs; 400 for anything wrong in it. */
  async function prepare(companyId: string, principal: Principal | null, search: AvailabilitySearch, nowMs: number, onlineOnly: boolean): Promise<PreparedSearch> {
    const target = await loadTarget(deps.db, repository, companyId, {
      LocationId: search.LocationId,
      ServiceId: search.ServiceId,
      ResourceIds: search.ResourceIds ?? [],
      CustomerId: search.CustomerId,
      location: 'query',
    }, principal);
    // A public booking page sees a service that is not shown online exactly as an unknown id.
    assertTargetOpen(target, { principal, named: { locationId: search.LocationId, serviceId: search.ServiceId }, onlineOnly, requireOffered: true });
    const zone = target.location.timezoneName;
    const { endDate, duration } = checkRange(search, { zone, service: target.service }, nowMs);
    const resources = search.ResourceIds?.length ? await namedResources(deps.db, companyId, target, search.ResourceIds, 'query') : target.bookable;
    return { location: target.location, service: target.service, resources, zone, endDate, duration };
  }

  /** `onlineOnly`: public booking pages see only services with showOnline. */
  async function answer(companyId: string, principal: Principal | null, search: AvailabilitySearch, options: SearchOptions = {}): Promise<SearchAnswer> {
    // Floored to the minute for every search, cached or not, so the cache cannot change an answer.
    const nowMs = Math.floor(clock() / 60_000) * 60_000;
    const prepared = await prepare(companyId, principal, search, nowMs, options.onlineOnly ?? false);
    const roundRobin = search.roundRobin ?? prepared.service.roundRobin;
    const searchKey = {
      l: search.LocationId,
      s: search.ServiceId,
      d: [search.startDate, prepared.endDate],
      n: prepared.duration,
      r: prepared.resources.map((r) => r.id),
      c: search.CustomerId ?? null,
      rr: roundRobin,
      z: search.timezone ?? null,
      t: nowMs,
    };
    const entities = {
      locations: [search.LocationId],
      services: [search.ServiceId],
      resources: prepared.resources.map((r) => r.id),
      customers: search.CustomerId ? [search.CustomerId] : [],
    };
    // Only compact answers carry the format in their key, so full answers keep theirs; the RANDOM
    // seed (searchKey) leaves it out, so both forms pick the same resource.
    const key = await deps.cache.keyFor(companyId, entities, search.format === 'compact' ? { ...searchKey, f: 'compact' } : searchKey);
    const cached = await deps.cache.get(key);
    if (cached) return { cached };

    // Busy time, appointments and allocations are loaded over the location dates the range covers.
    const reportZone = search.timezone ?? prepared.zone;
    const loadRange =
      reportZone === prepared.zone
        ? { startDate: search.startDate, endDate: prepared.endDate }
        : {
            startDate: DateTime.fromISO(search.startDate, { zone: reportZone }).setZone(prepared.zone).toISODate()!,
            endDate: DateTime.fromISO(prepared.endDate, { zone: reportZone }).endOf('day').setZone(prepared.zone).toISODate()!,
          };
    const inputs = await loadEngineInputs(repository, companyId, { ...prepared, endDate: loadRange.endDate }, {
      startDate: loadRange.startDate,
      roundRobin: search.roundRobin,
      CustomerId: search.CustomerId,
      now: nowMs,
    });
    const result = computeAvailability(
      engineInput(prepared, inputs, {
        now: nowMs,
        startDate: search.startDate,
        endDate: prepared.endDate,
        reportZone,
        roundRobin,
        customer: inputs.customer,
        random: seededRandom(JSON.stringify(searchKey)),
      }),
    );
    // The full answer is written as bytes (answer-bytes.ts: a long JSON.stringify result cost more
    // to read than to make); the compact one is small enough for JSON.stringify.
    const body = search.format === 'compact' ? Buffer.from(JSON.stringify(compactAnswer(result)), 'utf8') : availabilityAnswerBytes(result);
    // Compressed and stored off the request's path (cache.ts); a failure there is the cache's to report.
    void deps.cache.set(key, body);
    return { body };
  }

  /** The answer as JSON text (a cached one is decompressed). */
  async function searchJson(companyId: string, principal: Principal | null, search: AvailabilitySearch, options: { onlineOnly?: boolean } = {}): Promise<string> {
    const result = await answer(companyId, principal, search, options);
    return 'body' in result ? result.body.toString('utf8') : result.cached.text();
  }

  return {
    /**
     * The answer for a route to send: JSON bytes, or a cached answer, whose gzip bytes go as they
     * are stored to a client that takes gzip, never decompressed, parsed or serialised again.
     */
    answer,

    searchJson,

    async search(...args: Parameters<typeof searchJson>): Promise<AvailabilityResult> {
      // The text is computeAvailability's answer, serialised above (or cached as such).
      return JSON.parse(await searchJson(...args)) as AvailabilityResult;
    },
  };
}

export type AvailabilityService = ReturnType<typeof createAvailabilityService>;
