// Drill: 64 clients on 4 hot slots over two instances. Each round opens four new slots (capacity 1)
// and every client asks for one of them at once; exactly four win per round. Refusals must come
// fast (they are checked against the committed slot before any lock wait), no lock wait is
// unbounded, and nothing is oversold.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  bookingPath, call, cleanUp, crashed, dedicatedDatabase, figure, instances, oversold, percentile, shop, statusCounts,
} from './harness.js';
import type { Answer } from './harness.js';

after(cleanUp);

const serverUrl = process.env.TEST_DATABASE_URL;
const CLIENTS = 64;
const ROUNDS = 25;

test('64 clients on 4 hot slots over two instances', { skip: serverUrl ? false : 'TEST_DATABASE_URL is not set', timeout: 300_000 }, async () => {
  const databaseUrl = await dedicatedDatabase(serverUrl!);
  const running = await instances(2, { DATABASE_URL: databaseUrl });
  const s = await shop(running[0]!.base, { resources: 1 });
  const answers: Answer[] = [];
  const wins: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const day = new Date(Date.now() + (15 + round) * 86_400_000).toISOString().slice(0, 10);
    const hot = [10, 11, 12, 13].map((hour) => ({ startTime: `${day}T${hour}:00:00Z`, endTime: `${day}T${hour + 1}:00:00Z` }));
    const roundAnswers = await Promise.all(
      Array.from({ length: CLIENTS }, (_, client) =>
        call(running[client % 2]!.base, 'POST', bookingPath(s), s.headers, {
          Unavailability: hot[client % 4],
          ResourceIds: [s.resourceIds[0]],
          name: `C ${client}`,
          email: `c${client}-${round}-${randomUUID()}@example.com`,
        }),
      ),
    );
    answers.push(...roundAnswers);
    wins.push(roundAnswers.filter((a) => a.status === 201).length);
  }
  const refusals = answers.filter((a) => a.status === 400 && a.body?.code === 'BOOKING-105');
  const busy = answers.filter((a) => a.status === 409 && a.body?.code === 'BOOKING-137');

  figure('64 clients, 4 hot slots', 'requests; statuses', `${answers.length}; ${JSON.stringify(statusCounts(answers))}`);
  figure('64 clients, 4 hot slots', 'bookings won (4 slots × rounds)', `${wins.reduce((a, b) => a + b, 0)} of ${4 * ROUNDS}`);
  figure('64 clients, 4 hot slots', 'oversold slots', await oversold(databaseUrl, s));
  figure('64 clients, 4 hot slots', 'refusals (BOOKING-105) p50 / p99 / max ms', `${percentile(refusals.map((a) => a.ms), 50).toFixed(0)} / ${percentile(refusals.map((a) => a.ms), 99).toFixed(0)} / ${Math.max(...refusals.map((a) => a.ms)).toFixed(0)}`);
  figure('64 clients, 4 hot slots', 'all answers p50 / p99 / max ms', `${percentile(answers.map((a) => a.ms), 50).toFixed(0)} / ${percentile(answers.map((a) => a.ms), 99).toFixed(0)} / ${Math.max(...answers.map((a) => a.ms)).toFixed(0)}`);
  figure('64 clients, 4 hot slots', 'lock waits past the bound (409 BOOKING-137)', busy.length);
  figure('64 clients, 4 hot slots', 'crashes', crashed(running).length);

  assert.equal(crashed(running).length, 0);
  assert.equal(await oversold(databaseUrl, s), 0);
  for (const a of answers) assert.ok(a.status === 201 || (a.status === 400 && a.body?.code === 'BOOKING-105') || (a.status === 409 && a.body?.code === 'BOOKING-137'), `${a.status} ${JSON.stringify(a.body)}`);
  for (const won of wins) assert.ok(won <= 4);
});
