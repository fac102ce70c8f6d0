import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIRST_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS, retryDelayMs } from '../../../src/modules/external-calendars/write-back.js';

test('write-back retries back off, doubling up to an hour, and wait at least as long as Retry-After', () => {
  assert.equal(retryDelayMs(0, null), FIRST_RETRY_DELAY_MS);
  assert.equal(retryDelayMs(1, null), FIRST_RETRY_DELAY_MS * 2);
  assert.equal(retryDelayMs(3, null), FIRST_RETRY_DELAY_MS * 8);
  assert.equal(retryDelayMs(50, null), MAX_RETRY_DELAY_MS);
  assert.equal(retryDelayMs(0, 300_000), 300_000, 'Retry-After longer than the backoff wins');
  assert.equal(retryDelayMs(5, 1000), FIRST_RETRY_DELAY_MS * 32, 'a shorter Retry-After does not shorten the backoff');
  assert.equal(retryDelayMs(0, 10 * MAX_RETRY_DELAY_MS), MAX_RETRY_DELAY_MS, 'never more than an hour');
});
