import { buildApp } from './app.js';
import { startMetricsServer } from './platform/metrics.js';
import { ConfigError, loadConfig } from './platform/config.js';
import { openDatabase } from './platform/database/index.js';
import { migrate } from './platform/database/migrate.js';
import { resolveSecrets } from './platform/secrets.js';
import { Redis } from 'ioredis';
import { startOutboxWorker } from './platform/outbox/worker.js';

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

  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    poolSize: config.databasePoolSize,
  });
  await migrate(database.db);
  const secrets = await resolveSecrets(database.db, config);

  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: true }) : undefined;
  if (redis) await redis.connect();

  let draining = false;
  const app = await buildApp({ config, database, secrets, redis, isDraining: () => draining });
  await app.listen({ port: config.port, host: config.host });
  const metricsServer = config.security.metricsPort === undefined ? undefined : await startMetricsServer(app.metrics, config.security.metricsPort, config.host);
  app.log.info({ database: database.kind, dataDir: database.kind === 'pglite' ? config.dataDir : undefined }, 'Slotwise API ready');

  // Webhooks, email, SMS and reminders go out from the outbox, on every instance (claims keep
  // instances from sending the same thing twice).
  const worker = config.worker.enabled
    ? startOutboxWorker({
        pollMs: config.worker.pollMs,
        pass: () => app.dispatcher.runOnce(),
        onError: (error) => app.log.error({ err: error }, 'outbox pass failed'),
      })
    : undefined;

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
      await redis?.quit();
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
