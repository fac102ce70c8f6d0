// The outbox worker backs off while passes fail (the database away, say), and a write's kick does
// not break the backoff; one good pass resets it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_BACKOFF_MS, backoffMs, startOutboxWorker } from '../../src/platform/outbox/worker.js';

test('the wait doubles from the poll interval with each failed pass, up to MAX_BACKOFF_MS', () => {
  assert.deepEqual([1, 2, 3, 4].map((n) => backoffMs(1000, n)), [2000, 4000, 8000, MAX_BACKOFF_MS]);
  assert.equal(backoffMs(50, 1), 100);
  assert.equal(backoffMs(1000, 1000), MAX_BACKOFF_MS, 'no overflow however long the outage');
  assert.equal(backoffMs(60_000, 3), 60_000, 'a loop slower than the cap is never retried sooner than its interval');
});

test('a failing pass is retried after the backoff, not at once, and kick() does not cut it short', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let passes = 0;
  const errors: unknown[] = [];
  const worker = startOutboxWorker({
    pollMs: 100,
    pass: async () => {
      passes++;
      throw new Error('database away');
    },
    onError: (error) => errors.push(error),
  });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  t.mock.timers.tick(0);
  await settle();
  assert.equal(passes, 1);
  worker.kick();
  t.mock.timers.tick(150);
  await settle();
  assert.equal(passes, 1, 'neither the poll interval nor a kick brings the next pass before the backoff (200 ms)');
  t.mock.timers.tick(60);
  await settle();
  assert.equal(passes, 2);
  assert.equal(errors.length, 2);
  const stopping = worker.stop();
  await settle();
  await stopping;
});
