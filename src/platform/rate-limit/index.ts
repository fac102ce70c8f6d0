import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RedisGuard } from '../redis.js';
import type { RateBudget, RateLimitConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { AdmissionGate, AdmissionRefused } from './admission.js';
import type { Release } from './admission.js';
import {
  APPOINTMENT_CURSOR_ROUTE,
  APPOINTMENT_LIST_ROUTE,
  OAUTH_TOKEN_ROUTE,
  PUBLIC_BOOK_ROUTE,
  PUBLIC_HOLD_ROUTE,
  admissionKey,
  callerKey,
  familyOf,
  oauthClientId,
  refusalMessage,
} from './families.js';
import type { Family } from './families.js';
import { createMemoryStore, createRedisStore } from './store.js';
import type { Hit, RateLimitStore } from './store.js';
import { fieldOf } from '../values.js';

export { FAMILIES, refusalMessage } from './families.js';
export type { Family } from './families.js';

export interface RateLimitDeps {
  config: RateLimitConfig;
  /** Shared counters for every instance (through the deadline and breaker); this instance's memory without it. */
  redis?: RedisGuard | undefined;
  /**
   * Whether a client id exists (revoked or not). Only known ids spend the per-client and global
   * token budgets, so made-up ids cannot use up everyone's; without it every id counts as known.
   */
  knownClientId?: ((clientId: string) => Promise<boolean>) | undefined;
}

/** Seconds a refused admission (queue full or waited too long) asks the caller to wait. */
export const ADMISSION_RETRY_AFTER_SECONDS = 1;

const EXPOSED_HEADERS = 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After';

interface Bucket {
  key: string;
  budget: RateBudget;
}

const wholeSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * Rate limits and admission (README, Rate limits). Hooks, in this order:
 *  - onRequest, after the authentication hook (so it must be registered right after it): spends
 *    one request of the caller's budget in the route's family;
 *  - preValidation, on POST /v3/oauth/token only: spends the client id's budget and the global
 *    one (the body is parsed by then; the route has no authenticated caller);
 *  - preHandler, on GET /v3/appointments and /v3/appointments/cursor: waits for an admission slot
 *    of this instance, released when the response ends.
 * Every response whose budget was counted carries RateLimit-Limit, RateLimit-Remaining,
 * RateLimit-Reset and RateLimit-Policy; a refusal is 429 with Retry-After.
 */
export function registerRateLimits(app: FastifyInstance, { config, redis, knownClientId }: RateLimitDeps): void {
  if (!config.enabled) return;

  const memory = createMemoryStore();
  const store: RateLimitStore = redis
    ? createRedisStore(redis, {
        fallback: memory,
        onUnavailable: (error) =>
          app.log.warn({ err: error }, 'Rate limits: Redis is not answering; counting in this instance only until it does'),
        onRecovered: () => app.log.info('Rate limits: Redis answers again; budgets are shared again'),
      })
    : memory;
  const { budgets } = config;

  async function spend(reply: FastifyReply, family: Family, buckets: Bucket[]): Promise<void> {
    // In order, stopping at the first refusal: a client over its own budget does not spend the
    // global one, so one noisy client cannot use up everyone's token budget with its refusals.
    const states: Array<{ budget: Bucket['budget']; remaining: number; resetSeconds: number; exceeded: boolean }> = [];
    for (const bucket of buckets) {
      const hit: Hit = await store.hit(`${config.keyPrefix}${bucket.key}`, bucket.budget.windowSeconds * 1000);
      const exceeded = hit.count > bucket.budget.limit;
      states.push({ budget: bucket.budget, remaining: Math.max(0, bucket.budget.limit - hit.count), resetSeconds: wholeSeconds(hit.resetMs), exceeded });
      if (exceeded) break;
    }
    const exceeded = states.filter((s) => s.exceeded);
    // The headers describe the bucket that binds: a refusing one (the longest wait), else the
    // one with the fewest requests left.
    const shown = exceeded.length
      ? exceeded.reduce((a, b) => (b.resetSeconds > a.resetSeconds ? b : a))
      : states.reduce((a, b) => (b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a));
    reply.header('RateLimit-Limit', String(shown.budget.limit));
    reply.header('RateLimit-Remaining', String(shown.remaining));
    reply.header('RateLimit-Reset', String(shown.resetSeconds));
    reply.header('RateLimit-Policy', `${shown.budget.limit};w=${shown.budget.windowSeconds}`);
    if (exceeded.length) {
      reply.request.log.debug({ family }, 'rate limit exceeded');
      throw new ApiError(429, refusalMessage(family), [], undefined, { 'Retry-After': String(shown.resetSeconds) });
    }
  }

  /**
   * Buckets of the caller's network address, spent before the caller's own: one address's
   * flood is refused before it can spend a company's budget for everyone on its booking page.
   * The address is request.ip, which honours X-Forwarded-For only from TRUST_PROXY's peers.
   */
  function addressBuckets(request: FastifyRequest, family: Family): Bucket[] {
    const ip = request.ip;
    if (family === 'signIn') return [{ key: `signIn:ip:${ip}`, budget: budgets.signIn }];
    if (family === 'publicRead') return [{ key: `publicRead:ip:${ip}`, budget: budgets.publicReadIp }];
    if (family === 'publicWrite') {
      const buckets = [{ key: `publicWrite:ip:${ip}`, budget: budgets.publicWriteIp }];
      if (request.method === 'POST' && request.routeOptions.url === PUBLIC_HOLD_ROUTE) buckets.push({ key: `publicWrite:hold-ip:${ip}`, budget: budgets.publicHoldIp });
      return buckets;
    }
    return [];
  }

  /** The buckets a machine caller spent before its deferred credential check settled. */
  const deferredSpends = new WeakMap<FastifyRequest, string[]>();

  // Company and dashboard callers, public booking pages: one budget per family and caller; sign-in
  // routes and public pages also per network address.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    const family = familyOf(request.method, request.routeOptions.url);
    if (!family || family === 'oauthToken') return;
    const buckets = addressBuckets(request, family);
    if (principal) buckets.push({ key: `${family}:${callerKey(principal, family)}`, budget: budgets[family] });
    if (buckets.length === 0) return;
    // Booking pages run in browsers, which show scripts only the headers named here.
    if (principal?.kind === 'public') reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    // A machine caller whose credential check is deferred (auth/credential-check.ts) spends the
    // company's budget now; if the credential is refused, the request is given back at the end,
    // so a revoked token cannot use up its company's budget, as it could not when checked first.
    if (principal?.kind === 'machine' && principal.credentialCheck?.state === 'pending') deferredSpends.set(request, buckets.map((b) => `${config.keyPrefix}${b.key}`));
    await spend(reply, family, buckets);
  });

  // After the authentication hook's onSend (registered before this), which settles a check the
  // route did not; before the answer goes out, so the next request sees the budget given back.
  app.addHook('onSend', async (request: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    const keys = deferredSpends.get(request);
    if (!keys) return payload;
    deferredSpends.delete(request);
    const principal = request.principal;
    if (principal?.kind === 'machine' && principal.credentialCheck?.state === 'failed') await Promise.all(keys.map((key) => store.refund(key)));
    return payload;
  });

  // A public booking, per customer email across every company: a script cannot book one address
  // into appointments over and over (the body is parsed by now).
  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'PUT' || request.routeOptions.url !== PUBLIC_BOOK_ROUTE || request.principal?.kind !== 'public') return;
    const email = fieldOf(request.body, 'email');
    if (typeof email !== 'string' || email === '') return;
    await spend(reply, 'publicWrite', [{ key: `publicWrite:book-email:${email.trim().toLowerCase().slice(0, 254)}`, budget: budgets.publicBookEmail }]);
  });

  // Token requests: per IP address; then, for a client id that exists, per client id and for the
  // whole deployment. A made-up id spends only its sender's address budget.
  app.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'POST' || request.routeOptions.url !== OAUTH_TOKEN_ROUTE) return;
    const clientId = oauthClientId(request);
    const buckets: Bucket[] = [{ key: `oauthToken:ip:${request.ip}`, budget: budgets.oauthTokenIp }];
    if (clientId !== undefined && (!knownClientId || (await knownClientId(clientId)))) {
      buckets.push({ key: `oauthToken:client:${clientId}`, budget: budgets.oauthToken }, { key: 'oauthToken:global', budget: budgets.oauthTokenGlobal });
    }
    await spend(reply, 'oauthToken', buckets);
  });

  // The appointment lists: bounded concurrency per instance, with a small queue.
  const gates: Partial<Record<string, { gate: AdmissionGate; family: Family }>> = {
    [APPOINTMENT_LIST_ROUTE]: { gate: new AdmissionGate(config.admission.appointmentList), family: 'appointmentList' },
    [APPOINTMENT_CURSOR_ROUTE]: { gate: new AdmissionGate(config.admission.appointmentCursor), family: 'appointmentCursor' },
  };
  const releases = new WeakMap<FastifyRequest, Release>();

  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    if (!principal || (request.method !== 'GET' && request.method !== 'HEAD')) return;
    const entry = request.routeOptions.url === undefined ? undefined : gates[request.routeOptions.url];
    if (!entry) return;
    const refuse = (reason: string) => {
      request.log.debug({ family: entry.family, reason }, 'admission refused');
      return new ApiError(429, refusalMessage(entry.family), [], undefined, { 'Retry-After': String(ADMISSION_RETRY_AFTER_SECONDS) });
    };
    let gone = false;
    const onGone = () => (gone = true);
    reply.raw.once('close', onGone);
    let release: Release;
    try {
      release = await entry.gate.acquire(admissionKey(principal));
    } catch (error) {
      if (error instanceof AdmissionRefused) throw refuse(error.reason);
      throw error;
    } finally {
      reply.raw.off('close', onGone);
    }
    // The caller went away while waiting: give the slot straight back, and do not run the query.
    if (gone) {
      release();
      throw refuse('caller went away');
    }
    releases.set(request, release);
    // Whichever comes first: the response is sent, or the connection goes away.
    reply.raw.once('close', release);
  });

  app.addHook('onResponse', async (request: FastifyRequest) => {
    releases.get(request)?.();
  });
}
