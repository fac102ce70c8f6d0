/**
 * npm run bench:booking-statements   (BENCH_DATABASE_URL=postgres://… for PostgreSQL; default embedded)
 *
 * Counts the SQL statements the app sends per booking operation, through app.inject (no sockets,
 * no timing): direct bookings (POST /v3/appointment), holds (POST /v3/appointment/hold) and
 * booking those holds (PUT /v3/appointment/:id/book). The count is deterministic, so it can be
 * compared between trees while other work runs on the machine. It prints the mean statements per
 * operation, then every statement of one direct booking and of one book, in order, with how many
 * times each text was sent (issue 18). Beside the statements it counts the exchanges with the
 * database (calls of node-postgres's Client.query, which waits for one answer each): a transaction's
 * `begin`, and the `commit` after a statement marked as its last, go in the same exchange as a
 * statement (platform/database/transaction-control.ts).
 */
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import { migrate } from '../src/platform/database/migrate.js';
import { resolveSecrets } from '../src/platform/secrets.js';
import { createTokenService } from '../src/platform/auth/tokens.js';
import { seedTenant } from './booking.js';
import { withThrowawayPostgres } from './throwaway-postgres.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 20);
const ZONE = 'America/New_York';

async function run(label: string, open: (onStatement: (text: string) => void) => ReturnType<typeof openDatabase>) {
  let log: string[] | null = null;
  let exchanges = 0;
  const database = await open((text) => log?.push(text));
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (log) exchanges++;
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof clientQuery;
  try {
    await migrate(database.db);
    const tenant = await seedTenant(database.db, COUNT * 2);
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMITS_ENABLED: 'false' });
    const secrets = await resolveSecrets(database.db, config);
    const app = await buildApp({ config, database, secrets });
    try {
      const tokens = createTokenService(secrets, config);
      const clientId = `bench-${randomUUID()}`;
      await database.db.insertInto('clientCredentials').values({ companyId: tenant.companyId, id: randomUUID(), clientId, secretHash: 'x', name: 'bench', createdByUserId: null }).execute();
      const token = await tokens.signMachineToken({ companyId: tenant.companyId, clientId, scopes: ['write'] });
      const headers = { authorization: `Bearer ${token}` };
      const query = `LocationId=${tenant.locationId}&ServiceId=${tenant.serviceId}`;
      const base = DateTime.now().setZone(ZONE).startOf('day').plus({ days: 2 });
      let customer = 0;
      // Slot k: resource k mod 20, a distinct hour (10 a day) on the days after tomorrow.
      const body = (k: number) => {
        const start = base.plus({ days: Math.floor(k / 200) }).set({ hour: 8 + (Math.floor(k / 20) % 10) });
        return {
          Unavailability: { startTime: start.toISO()!, endTime: start.plus({ hours: 1 }).toISO()! },
          ResourceIds: [tenant.resourceIds[k % 20]!],
          CustomerId: tenant.customerIds[customer++]!,
        };
      };
      /** Sends one request; answers the statements it sent (and fails on an unexpected status). */
      const measured = async (method: 'POST' | 'PUT', url: string, payload: unknown, expected: number) => {
        log = [];
        exchanges = 0;
        const answer = await app.inject({ method, url, headers, payload: payload as object });
        const sent = log;
        log = null;
        if (answer.statusCode !== expected) throw new Error(`${method} ${url} -> ${answer.statusCode} ${answer.body.slice(0, 400)}`);
        return { sent, exchanges, json: answer.json() as { id: string } };
      };

      const perOperation = { create: [] as string[][], hold: [] as string[][], book: [] as string[][] };
      const exchangesOf = { create: 0, hold: 0, book: 0 };
      let k = 0;
      for (let i = 0; i < COUNT; i++) {
        const { sent, exchanges: n } = await measured('POST', `/v3/appointment?${query}`, body(k++), 201);
        perOperation.create.push(sent);
        exchangesOf.create += n;
      }
      const held: string[] = [];
      for (let i = 0; i < COUNT; i++) {
        const { sent, exchanges: n, json } = await measured('POST', `/v3/appointment/hold?${query}`, body(k++), 201);
        perOperation.hold.push(sent);
        exchangesOf.hold += n;
        held.push(json.id);
      }
      for (const id of held) {
        const { sent, exchanges: n } = await measured('PUT', `/v3/appointment/${id}/book`, {}, 200);
        perOperation.book.push(sent);
        exchangesOf.book += n;
      }

      const mean = (runs: string[][]) => (runs.reduce((sum, r) => sum + r.length, 0) / runs.length).toFixed(1);
      const perRun = (total: number) => (total / COUNT).toFixed(1);
      console.log(`\n${label}: SQL statements per operation; exchanges with the database (mean of ${COUNT})`);
      console.log(`  direct booking (POST /v3/appointment): ${mean(perOperation.create)}; ${perRun(exchangesOf.create)}`);
      console.log(`  hold (POST /v3/appointment/hold):      ${mean(perOperation.hold)}; ${perRun(exchangesOf.hold)}`);
      console.log(`  book a hold (PUT …/:id/book):          ${mean(perOperation.book)}; ${perRun(exchangesOf.book)}`);
      for (const [name, runs] of [['direct booking', perOperation.create], ['book a hold', perOperation.book]] as const) {
        // The last run: caches and prepared state are warm, as in steady traffic.
        const one = runs[runs.length - 1]!;
        const counts = new Map<string, number>();
        for (const text of one) {
          const short = text.replace(/\s+/g, ' ').trim();
          counts.set(short, (counts.get(short) ?? 0) + 1);
        }
        console.log(`\n  Statements of one ${name} (${one.length}), in order of first use:`);
        for (const [text, n] of counts) console.log(`  ${String(n).padStart(3)} × ${text.length > 220 ? `${text.slice(0, 217)}...` : text}`);
      }
    } finally {
      await app.close();
    }
  } finally {
    pg.Client.prototype.query = clientQuery;
    await database.close();
  }
}

async function main() {
  await run('Embedded database (PGlite)', (onStatement) => openDatabase({ onStatement }));
  if (process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL) {
    await withThrowawayPostgres(({ url, version }) => run(`PostgreSQL ${version}`, (onStatement) => openDatabase({ databaseUrl: url, poolSize: 10, onStatement })));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
