#!/usr/bin/env node
// Creates or drops a throwaway PostgreSQL database for a test run, so CI's PostgreSQL pass
// always starts from an empty schema.
//   node scripts/test-database.mjs create <server url>   prints the new database's URL
//   node scripts/test-database.mjs drop <database url>
import pg from 'pg';
import { randomBytes } from 'node:crypto';

const [command, url] = process.argv.slice(2);
if (!url || (command !== 'create' && command !== 'drop')) {
  console.error('usage: test-database.mjs create <server url> | drop <database url>');
  process.exit(2);
}
const target = new URL(url);
const server = new URL(url);
if (command === 'drop') server.pathname = '/postgres';
const client = new pg.Client({ connectionString: server.toString() });
await client.connect();
try {
  if (command === 'create') {
    const name = `slotwise_test_${randomBytes(6).toString('hex')}`;
    await client.query(`create database ${name}`);
    target.pathname = `/${name}`;
    console.log(target.toString());
  } else {
    const name = target.pathname.slice(1);
    if (!/^slotwise_test_[0-9a-f]+$/.test(name)) throw new Error(`refusing to drop ${name}: not a test database`);
    await client.query(`drop database if exists ${name} with (force)`);
  }
} finally {
  await client.end();
}
