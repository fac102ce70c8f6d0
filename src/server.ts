import { buildApp } from './app.js';
import { startMetricsServer } from './platform/metrics.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { openDatabase } from './platform/database/index.js';
import type { DatabaseHandle } from './platform/database/index.js';
import { migrate } from './platform/database/migrate.js';
import { resolveSecrets } from './platform/secrets.js';
import { startOutboxWorker } from './platform/outbox/worker.js';
import { startEmbeddedUpkeep } from './platform/database/embedded-upkeep.js';
import { createRedisClient } from './platform/redis.js';
import { DataDirLockedError } from './platform/database/data-dir-lock.js';
import { isDatabaseUnavailable } from './platform/database/errors.js';
import { errorMessage } from './platform/values.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(1);
    }
    throw error;
  }

  // Until the app (and its logger) exists, connection failures go to stderr.
  let logConnectionError = (error: Error) => console.error(`database connection lost: ${error.message}`);
  let logPreparedStatementsStopped = (error: unknown) => console.error(`named prepared statements turned off: ${errorMessage(error)}`);
  let database;
  try {
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      poolSize: config.databasePoolSize,
      preparedStatements: config.databasePreparedStatements,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      lockTimeoutMs: config.databaseLockTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      // A connection cut while in use (PostgreSQL restarted): that request answers 503, the pool
      // replaces the connection, the process goes on. Logged once per broken connection.
      onConnectionError: (error) => logConnectionError(error),
      // A transaction-mode pooler below us (DATABASE_PREPARED_STATEMENTS left on behind PgBouncer
      // before 1.21): the failed statement is sent again unnamed, and so is every later one.
      onPreparedStatementsStopped: (error) => logPreparedStatementsStopped(error),
    });
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  // The database may still be coming up (a host reboot): wait for it rather than exit, so a
  // supervisor's start limit is not spent on a slow database. Any other failure ends the process.
  let secrets;
  for (let attempt = 1; ; attempt++) {
    try {
      // Migrations on PostgreSQL run on a connection of their own without the request timeouts
      // (statement and client-side query timeouts), so a long migration statement is never cut off.
      const migrationDatabase: DatabaseHandle = config.databaseUrl ? await openDatabase({ databaseUrl: config.databaseUrl, poolSize: 1, connectTimeoutMs: config.databaseConnectTimeoutMs }) : database;
      try {
        await migrate(migrationDatabase.db);
      } finally {
        if (migrationDatabase !== database) await migrationDatabase.close();
      }
      secrets = await resolveSecrets(database.db, config);
      break;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      const waitMs = Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
      console.error(`The database is not reachable yet (${errorMessage(error)}); trying again in ${waitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  // Redis is optional at start too: the client connects (and reconnects) in the background, and
  // until it answers, rate limits count in this instance and the availability cache is bypassed.
  let redisDown = false;
  const redis = config.redisUrl
    ? createRedisClient(config.redisUrl, {
        timeoutMs: config.redis.timeoutMs,
        onError: (error) => {
          if (!redisDown) console.error(JSON.stringify({ level: 40, msg: 'Redis connection failed; retrying in the background', err: error.message }));
          redisDown = true;
        },
      })
    : undefined;
  redis?.on('ready', () => (redisDown = false));
  redis?.connect().catch(() => {});

  let draining = false;
  const app = await buildApp({ config, database, secrets, redis, isDraining: () => draining, compileSchemasOnFirstUse: !config.schemasCompiledAtStart });
  logConnectionError = (error) => app.log.error({ err: error }, 'database connection lost; the pool replaces it');
  logPreparedStatementsStopped = (error) =>
    app.log.warn({ err: error }, 'a pooler between this instance and PostgreSQL does not keep named prepared statements: they are off from now on (set DATABASE_PREPARED_STATEMENTS=false)');
  await app.listen({ port: config.port, host: config.host });
  const metricsServer = config.security.metricsPort === undefined ? undefined : await startMetricsServer(app.metrics, config.security.metricsPort, config.host);
  app.log.info({ database: database.kind, dataDir: database.kind === 'pglite' ? config.dataDir : undefined }, 'Slotwise API ready');
  const base = config.publicBaseUrl?.replace(/\/+$/, '') ?? `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${config.port}`;
  app.log.info({ database: database.kind, dataDir: database.kind === 'pglite' ? config.dataDir : undefined, docs: `${base}/docs` }, `Slotwise API ready: the API reference is at ${base}/docs`);

  // Webhooks, email, SMS and reminders go out from the outbox, on every instance (claims keep
  // instances from sending the same thing twice).
  const worker = config.worker.enabled
    ? startOutboxWorker({
        pollMs: config.worker.pollMs,
        pass: () => app.dispatcher.runOnce(),
        onError: (error) => app.log.error({ err: error }, 'outbox pass failed'),
      })
    : undefined;
  // External calendars: due syncs and write-backs (claims keep instances off each other's work).
  const calendarWorker = config.worker.enabled
    ? startOutboxWorker({
        pollMs: config.externalCalendars.pollMs,
        pass: async () => ({ reminders: 0, events: await app.externalCalendars.worker.runOnce() }),
        onError: (error) => app.log.error({ err: error }, 'external calendar pass failed'),
      })
    : undefined;
  app.externalCalendars.onKick(() => calendarWorker?.kick());
  // v1 import jobs whose instance stopped (crash, deploy) are resumed by whichever instance looks first.
  const migrationWorker = config.worker.enabled
    ? startOutboxWorker({
        pollMs: config.migration.pollMs,
        pass: async () => ({ reminders: 0, events: await app.migration.resumeStale() }),
        onError: (error) => app.log.error({ err: error }, 'migration job pass failed'),
      })
    : undefined;

  // The embedded database has no autovacuum: the instance checks its tables by autovacuum's rules
  // (whatever WORKER_ENABLED says: it is the database's upkeep, not the outbox's work).
  const upkeepWorker = startEmbeddedUpkeep(database, {
    seconds: config.embeddedUpkeepSeconds,
    // A shutdown waits for the table in hand at most, not the rest of the pass.
    stopping: () => draining,
    onPass: (done) => {
      if (done.vacuumed.length + done.analyzed.length > 0) app.log.info(done, 'embedded database upkeep: tables vacuumed and analyzed');
    },
    onError: (error) => app.log.error({ err: error }, 'embedded database upkeep failed'),
  });

  // Graceful shutdown: fail readiness, stop accepting, let requests in flight finish, close the
  // database. A second signal, or the grace period running out, ends the process at once.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    draining = true;
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      app.log.error('shutdown grace period over; exiting');
      process.exit(1);
    }, config.shutdownGraceMs + 1000);
    timer.unref();
    try {
      // The pass in flight finishes first: a delivery is never cut in half.
      await worker?.stop();
      await calendarWorker?.stop();
      await migrationWorker?.stop();
      await upkeepWorker?.stop();
      await app.close();
      await metricsServer?.close();
      // A handler whose client went away is not waited for by close(): let the connections it
      // holds come back before the database closes, within the grace period.
      const until = Date.now() + config.shutdownGraceMs;
      for (let stats = database.poolStats(); stats.total > stats.idle || stats.waiting > 0; stats = database.poolStats()) {
        if (Date.now() > until) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await database.close();
      await redis?.quit().catch(() => redis.disconnect());
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
