// The PostgreSQL side of a bench: a throwaway database on BENCH_DATABASE_URL (else DATABASE_URL,
// else the local server), dropped afterwards whatever happens. Unreachable or refused: says why
// and answers null, so the embedded figures still print.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ThrowawayPostgres {
  /** The throwaway database's URL. */
  url: string;
  name: string;
  /** A connection to the server's own database (for statistics, or to drop connections). */
  admin: pg.Client;
  version: string;
  /** The server's host, for printing (never the password). */
  host: string;
}

export async function withThrowawayPostgres<T>(run: (database: ThrowawayPostgres) => Promise<T>): Promise<T | null> {
  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const shown = new URL(serverUrl);
  shown.password = shown.password ? '***' : '';
  const admin = new pg.Client({ connectionString: serverUrl });
  admin.on('error', () => {});
  try {
    await admin.connect();
  } catch (error) {
    console.log(`\nPostgreSQL: skipped, ${shown.toString()} cannot be reached (${(error as Error).message}); set BENCH_DATABASE_URL or DATABASE_URL`);
    return null;
  }
  const name = `slotwise_bench_${randomBytes(6).toString('hex')}`;
  try {
    await admin.query(`create database ${name}`);
  } catch (error) {
    console.log(`\nPostgreSQL: skipped, cannot create a throwaway database on ${shown.toString()} (${(error as Error).message})`);
    await admin.end();
    return null;
  }
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? '';
    return await run({ url: url.toString(), name, admin, version, host: shown.host });
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
