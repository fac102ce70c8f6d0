// engineWindow's packed rows (modules/availability/repository.ts): the text PostgreSQL builds with
// string_agg is read character by character; it must read exactly what splitting it would.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ANOTHER_SERVICE, packedNumbers, parsePackedBusy } from '../../../src/modules/availability/repository.js';

/** The reading before issue 18: split into rows, rows into fields, fields into numbers. */
const bySplitting = (text: string) => text.split(';').map((row) => row.split(',').map(Number));

describe('packed rows', () => {
  test('random rows of any width read as splitting them would, row after row', () => {
    const number = fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: -1_000_000, max: 4_102_444_800_000 }), fc.constant(Number.MAX_SAFE_INTEGER));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 40 }), fc.infiniteStream(number), (width, count, numbers) => {
        const rows = Array.from({ length: count }, () => Array.from({ length: width }, () => numbers.next().value as number));
        const text = rows.map((row) => row.join(',')).join(';');
        assert.deepEqual(bySplitting(text), rows);
        assert.deepEqual([...packedNumbers(text, width)], rows.flat());
      }),
      { numRuns: 300 },
    );
  });

  test('no rows (null or empty) is no numbers', () => {
    assert.equal(packedNumbers(null, 3).length, 0);
    assert.equal(packedNumbers('', 3).length, 0);
  });

  test('a row of another width, an empty field or a stray character is thrown, not read as a number', () => {
    const faults: Array<[string, number]> = [
      ['1,2;3', 2],
      ['1,2,3;4,5', 3],
      ['1,2,3', 2],
      ['1,,3', 3],
      ['1,2,', 3],
      ['1,2;', 2],
      ['1,2.5', 2],
      ['1,2 ', 2],
      ['1,--2', 2],
      ['1,2-3', 2],
      ['-', 1],
      ['a,b', 2],
    ];
    for (const [text, width] of faults) assert.throws(() => packedNumbers(text, width), /Packed rows/, text);
  });

  test('busy rows name their resource and service by position, 0 being another service', () => {
    const rows = parsePackedBusy('2,1000,2000,5,30,1;1,3000,4000,0,15,0', ['r1', 'r2'], ['s1'], 0);
    assert.deepEqual(rows, [
      { resourceId: 'r2', resourceIds: ['r2'], serviceId: 's1', start: 1000, end: 2000, padding: 5, duration: 30 },
      { resourceId: 'r1', resourceIds: ['r1'], serviceId: ANOTHER_SERVICE, start: 3000, end: 4000, padding: 0, duration: 15 },
    ]);
  });

  test("rows of one resource share one frozen resourceIds array, which no caller can change", () => {
    const rows = parsePackedBusy('1,1000,2000,0,30,1;2,1000,2000,0,30,1;1,3000,4000,0,30,1', ['r1', 'r2'], ['s1'], 0);
    assert.equal(rows[0]!.resourceIds, rows[2]!.resourceIds);
    assert.notEqual(rows[0]!.resourceIds, rows[1]!.resourceIds);
    assert.ok(Object.isFrozen(rows[0]!.resourceIds));
    assert.throws(() => (rows[0]!.resourceIds as string[]).push('r2'), TypeError);
    assert.deepEqual(rows[2]!.resourceIds, ['r1']);
  });
});
