import { createServer } from 'node:http';
import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { App } from './http/types.js';
import type { DatabaseHandle } from './database/index.js';

/**
 * Prometheus metrics of one app instance, served at GET /metrics (text format 0.0.4).
 *
 * Every app has its own Registry (never prom-client's global one), so several apps in one process
 * (tests, benches) keep separate counts. Every metric is described in README.md, "Metrics".
 *
 * - HTTP: requests, latency and errors by method, route pattern (never the raw URL, which holds
 *   ids) and status code. Requests that match no route are labelled route="(unmatched)".
 * - Database pool and outbox: read at scrape time (the outbox with one query on the partial index
 *   outbox_events_pending_idx).
 * - Webhook deliveries: counted by the dispatcher of this instance as it finishes each one.
 * - The default Node.js process metrics of prom-client (CPU, memory, event loop lag, GC...).
 */

export type WebhookOutcome = 'delivered' | 'failed';

export interface Metrics {
  registry: Registry;
  /** Counts one finished webhook delivery (called by the outbox dispatcher). */
  recordWebhookOutcome(outcome: WebhookOutcome): void;
  /** Counts one Redis call that failed or was skipped by the breaker, by operation. */
  recordRedisFailure(operation: string): void;
  /** Whether the Redis breaker is open (Redis skipped) right now. */
  setRedisBreakerOpen(open: boolean): void;
  /** Counts one request answered 503 because the database could not be reached. */
  recordDatabaseUnavailable(): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

export interface MetricsDeps {
  database: Pick<DatabaseHandle, 'db' | 'poolStats'>;
  /** Where a failed outbox reading at scrape time is reported (the scrape still answers). */
  log?: { warn(object: unknown, message: string): void };
}

/** The route label of a request that matched no route: a fixed value, so 404 probes add no series. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** Latency buckets, seconds: from a cached read (a few ms) to the five-second webhook deadline and beyond. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics({ database, log }: MetricsDeps): Metrics & {
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
} {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'slotwise_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'slotwise_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'slotwise_http_errors_total',
    help: 'HTTP answers with a 4xx or 5xx status, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });

  new Gauge({
    name: 'slotwise_db_pool_connections',
    help: 'Connections the database pool holds (busy and idle)',
    registers: [registry],
    collect() {
      this.set(database.poolStats().total);
    },
  });
  new Gauge({
    name: 'slotwise_db_pool_idle_connections',
    help: 'Connections of the database pool that are idle',
    registers: [registry],
    collect() {
      this.set(database.poolStats().idle);
    },
  });
  new Gauge({
    name: 'slotwise_db_pool_waiting_requests',
    help: 'Requests for a database connection waiting because every connection is busy',
    registers: [registry],
    collect() {
      this.set(database.poolStats().waiting);
    },
  });

  // One query per scrape for both outbox gauges: their collect() run together, so they share the
  // reading in flight. The age uses the database clock, the same clock that wrote created_at.
  let reading: Promise<{ pending: number; lagSeconds: number } | null> | undefined;
  const readOutbox = () =>
    (reading ??= sql<{ pending: number; lagSeconds: number | null }>`
      select count(*)::int as pending,
             extract(epoch from clock_timestamp() - min(created_at))::float8 as lag_seconds
      from outbox_events where processed_at is null`
      .execute(database.db)
      .then((result) => {
        const row = result.rows[0];
        return { pending: Number(row?.pending ?? 0), lagSeconds: Math.max(0, Number(row?.lagSeconds ?? 0)) };
      })
      .catch((error: unknown) => {
        log?.warn({ err: error }, 'metrics: could not read the outbox');
        return null;
      })
      .finally(() => {
        reading = undefined;
      }));
  new Gauge({
    name: 'slotwise_outbox_lag_seconds',
    help: 'Age of the oldest outbox event not yet processed (0 when none is pending)',
    registers: [registry],
    async collect() {
      const outbox = await readOutbox();
      if (outbox) this.set(outbox.lagSeconds);
    },
  });
  new Gauge({
    name: 'slotwise_outbox_pending_events',
    help: 'Outbox events not yet processed (webhooks, email and SMS still to send)',
    registers: [registry],
    async collect() {
      const outbox = await readOutbox();
      if (outbox) this.set(outbox.pending);
    },
  });

  const webhooks = new Counter({
    name: 'slotwise_webhook_deliveries_total',
    help: 'Webhook deliveries finished by this instance\'s outbox worker, by outcome (delivered: a 2xx answer; failed: anything else)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // Both series exist from the start, so a rate() over them works before the first delivery.
  webhooks.inc({ outcome: 'delivered' }, 0);
  webhooks.inc({ outcome: 'failed' }, 0);

  const redisFailures = new Counter({
    name: 'slotwise_redis_failures_total',
    help: 'Redis calls that failed, timed out or were skipped by the open breaker, by operation (cache-touch: a cache bump after a write; rate-limit: counted in memory instead)',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const redisBreaker = new Gauge({
    name: 'slotwise_redis_breaker_open',
    help: '1 while this instance skips Redis after repeated failures, else 0',
    registers: [registry],
  });
  redisBreaker.set(0);
  const databaseUnavailable = new Counter({
    name: 'slotwise_database_unavailable_total',
    help: 'Requests answered 503 because the database could not be reached',
    registers: [registry],
  });

  return {
    registry,
    recordWebhookOutcome(outcome) {
      webhooks.inc({ outcome });
    },
    recordRedisFailure(operation) {
      redisFailures.inc({ operation });
    },
    setRedisBreakerOpen(open) {
      redisBreaker.set(open ? 1 : 0);
    },
    recordDatabaseUnavailable() {
      databaseUnavailable.inc();
    },
    observeRequest(method, route, statusCode, seconds) {
      const status = String(statusCode);
      requests.inc({ method, route, status_code: status });
      duration.observe({ method, route }, seconds);
      if (statusCode >= 400) errors.inc({ method, route, status_code: status });
    },
  };
}

/**
 * Counts every answer (onResponse) and serves GET /metrics, outside /v3 and without credentials:
 * expose it only on the internal network (see README.md, "Metrics"). Hidden from the OpenAPI
 * document, which describes the API for its callers.
 */
export function registerMetrics(app: App, deps: MetricsDeps & { ownPort?: boolean }): Metrics {
  const metrics = createMetrics(deps);

  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
  });

  // With METRICS_PORT, /metrics is served only by startMetricsServer (server.ts), not the API port.
  if (!deps.ownPort) {
    app.get('/metrics', { config: { access: { mode: 'none' } }, schema: { hide: true } }, async (_request, reply) => {
      const text = await metrics.registry.metrics();
      return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(text);
    });
  }

  const { registry, recordWebhookOutcome, recordRedisFailure, setRedisBreakerOpen, recordDatabaseUnavailable } = metrics;
  const exposed: Metrics = { registry, recordWebhookOutcome, recordRedisFailure, setRedisBreakerOpen, recordDatabaseUnavailable };
  app.decorate('metrics', exposed);
  return exposed;
}

/**
 * GET /metrics on a port of its own (METRICS_PORT), so the API port, which faces the internet,
 * does not show it. Anything else on this port is 404.
 */
export async function startMetricsServer(metrics: Metrics, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
