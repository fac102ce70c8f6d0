// The availability answer written as bytes (answer-bytes.ts) must be exactly the UTF-8 of
// JSON.stringify of the same answer, which is what the route sent before the bytes were written by
// hand. The engine's own answers are compared in test/domain/availability-oracle.test.ts; here,
// answers with any strings and numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AvailabilityResult } from '../../../src/domain/availability.js';
import { availabilityAnswerBytes } from '../../../src/modules/availability/answer-bytes.js';

// Any UTF-16 units: quotes, backslashes, control characters, characters of two to four UTF-8 bytes
// and lone surrogates, which JSON.stringify writes as escapes.
const anyText = fc.string({ unit: 'binary', maxLength: 12 });
const someText = fc.oneof(anyText, fc.uuid(), fc.constantFrom('2026-11-28T13:00:00.000Z', 'Ünïcödé "quoted" \\ back', '\u2028\u2029', '\ud800', '😀'));
const anyNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0));

const answer: fc.Arbitrary<AvailabilityResult> = fc.record({
  timezoneName: someText,
  availableTimes: fc.array(
    fc.record({
      startTime: someText,
      endTime: someText,
      // Ids drawn from a small set, so that most repeat, as resource ids do across slots.
      resourceIds: fc.array(fc.oneof(fc.constantFrom('a', 'é', '"', '😀'), someText), { maxLength: 6 }),
      remaining: anyNumber,
    }),
    { maxLength: 20 },
  ),
  availableDays: fc.array(
    fc.oneof(
      fc.record({ date: someText, available: fc.boolean(), reason: fc.option(someText, { nil: null }) }),
      fc.record({ date: someText, available: fc.boolean(), reason: fc.option(someText, { nil: null }), holidayName: someText }),
    ),
    { maxLength: 5 },
  ),
});

test('the bytes are the UTF-8 of JSON.stringify, for any answer', () => {
  fc.assert(
    fc.property(answer, (result) => {
      assert.deepEqual(availabilityAnswerBytes(result), Buffer.from(JSON.stringify(result), 'utf8'));
    }),
    { numRuns: 500 },
  );
});

test('an answer larger than the first guess of its size grows the buffer and loses nothing', () => {
  // Ids far longer than the UUIDs the first guess assumes, and many slots.
  const ids = Array.from({ length: 40 }, (_, i) => `${'résource-'.repeat(20)}${i}`);
  const result: AvailabilityResult = {
    timezoneName: 'America/New_York',
    availableTimes: Array.from({ length: 300 }, (_, i) => ({ startTime: `start ${i}`, endTime: `end ${i}`, resourceIds: ids.slice(i % 40), remaining: i })),
    availableDays: [{ date: '2026-12-25', available: false, reason: 'holiday', holidayName: 'Noël' }],
  };
  const bytes = availabilityAnswerBytes(result);
  assert.equal(bytes.toString('utf8'), JSON.stringify(result));
  assert.deepEqual(JSON.parse(bytes.toString('utf8')), result);
});

test('an empty answer', () => {
  const result: AvailabilityResult = { timezoneName: 'UTC', availableTimes: [], availableDays: [] };
  assert.equal(availabilityAnswerBytes(result).toString('utf8'), '{"timezoneName":"UTC","availableTimes":[],"availableDays":[]}');
});
