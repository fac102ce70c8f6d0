import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { allowedDurations, serviceSettingProblems } from '../../src/domain/service-rules.js';
import type { ServiceSettings } from '../../src/domain/service-rules.js';

const plain: ServiceSettings = {
  duration: 30,
  durationSelect: false,
  durationMin: null,
  durationMax: null,
  durationInterval: null,
  bookAheadUnit: 'none',
  bookAheadValue: null,
};
/** 30 to 120 minutes in steps of 15, default 60: passes every rule. */
const select: ServiceSettings = { ...plain, duration: 60, durationSelect: true, durationMin: 30, durationMax: 120, durationInterval: 15 };

/** [path, code] of each problem, in order. */
const codes = (settings: ServiceSettings) => serviceSettingProblems(settings).map((p) => [p.path, p.code]);

describe('serviceSettingProblems', () => {
  test('a plain service and a valid duration-select setup have no problems', () => {
    assert.deepEqual(serviceSettingProblems(plain), []);
    assert.deepEqual(serviceSettingProblems(select), []);
    assert.deepEqual(serviceSettingProblems({ ...select, duration: 30 }), [], 'duration at the minimum');
    assert.deepEqual(serviceSettingProblems({ ...select, duration: 120 }), [], 'duration at the maximum');
  });

  test('without durationSelect the min, max and interval are not checked', () => {
    assert.deepEqual(serviceSettingProblems({ ...plain, durationMin: 0, durationMax: 7, durationInterval: 0 }), []);
    assert.deepEqual(serviceSettingProblems({ ...select, durationSelect: false, duration: 500 }), []);
  });

  test('SERVICE-112: durationInterval must be above zero', () => {
    assert.deepEqual(codes({ ...select, durationInterval: 0 }), [['durationInterval', 'SERVICE-112']]);
    assert.deepEqual(codes({ ...select, durationInterval: null }), [['durationInterval', 'SERVICE-112']]);
  });

  test('SERVICE-113: durationMin must be above zero', () => {
    assert.deepEqual(codes({ ...select, durationMin: 0 }), [['durationMin', 'SERVICE-113']]);
    assert.deepEqual(codes({ ...select, durationMin: null }), [['durationMin', 'SERVICE-113']]);
  });

  test('SERVICE-114: durationMax must be above durationMin', () => {
    assert.deepEqual(codes({ ...select, durationMin: 60, durationMax: 60, duration: 60 }), [['durationMax', 'SERVICE-114']]);
    assert.deepEqual(codes({ ...select, durationMin: 90, durationMax: 45, duration: 60 }), [['durationMax', 'SERVICE-114']]);
    assert.deepEqual(codes({ ...select, durationMax: null }), [['durationMax', 'SERVICE-114']]);
  });

  test('SERVICE-115: durationMax must be divisible by durationMin', () => {
    assert.deepEqual(codes({ ...select, durationMin: 40, durationMax: 100, durationInterval: 20, duration: 40 }), [['durationMax', 'SERVICE-115']]);
  });

  test('SERVICE-116: durationMax must be divisible by durationInterval', () => {
    assert.deepEqual(codes({ ...select, durationMin: 30, durationMax: 90, durationInterval: 20, duration: 30 }), [['durationMax', 'SERVICE-116']]);
  });

  test('SERVICE-115 and SERVICE-116 together', () => {
    assert.deepEqual(codes({ ...select, durationMin: 30, durationMax: 100, durationInterval: 15, duration: 30 }), [
      ['durationMax', 'SERVICE-115'],
      ['durationMax', 'SERVICE-116'],
    ]);
  });

  test('SERVICE-125: duration must lie between min and max', () => {
    const below = serviceSettingProblems({ ...select, duration: 15 });
    assert.deepEqual(below, [{ path: 'duration', msg: 'duration 15 must lie between min 30 and max 120 when durationSelect is true', code: 'SERVICE-125' }]);
    assert.deepEqual(codes({ ...select, duration: 121 }), [['duration', 'SERVICE-125']]);
  });

  test('durationSelect with nothing set reports 112, 113 and 114', () => {
    assert.deepEqual(codes({ ...plain, durationSelect: true }), [
      ['durationInterval', 'SERVICE-112'],
      ['durationMin', 'SERVICE-113'],
      ['durationMax', 'SERVICE-114'],
    ]);
  });

  test('SETTINGS-105: book-ahead value bounds per unit', () => {
    const bounds = { days: 365, weeks: 52, months: 1440 } as const;
    for (const [unit, max] of Object.entries(bounds) as Array<[keyof typeof bounds, number]>) {
      assert.deepEqual(serviceSettingProblems({ ...plain, bookAheadUnit: unit, bookAheadValue: 1 }), [], `${unit} 1`);
      assert.deepEqual(serviceSettingProblems({ ...plain, bookAheadUnit: unit, bookAheadValue: max }), [], `${unit} ${max}`);
      assert.deepEqual(codes({ ...plain, bookAheadUnit: unit, bookAheadValue: max + 1 }), [['bookAheadValue', 'SETTINGS-105']], `${unit} ${max + 1}`);
      assert.deepEqual(codes({ ...plain, bookAheadUnit: unit, bookAheadValue: 0 }), [['bookAheadValue', 'SETTINGS-105']], `${unit} 0`);
    }
    assert.match(serviceSettingProblems({ ...plain, bookAheadUnit: 'weeks', bookAheadValue: 53 })[0]!.msg, /1 to 52 for weeks/);
  });

  test('SETTINGS-106: unit and value go together, in both directions', () => {
    assert.deepEqual(codes({ ...plain, bookAheadUnit: 'days', bookAheadValue: null }), [['bookAheadValue', 'SETTINGS-106']]);
    assert.deepEqual(codes({ ...plain, bookAheadUnit: 'none', bookAheadValue: 10 }), [['bookAheadValue', 'SETTINGS-106']]);
    assert.deepEqual(serviceSettingProblems({ ...plain, bookAheadUnit: 'months', bookAheadValue: 6 }), []);
  });

  test('duration-select and book-ahead problems are reported together', () => {
    assert.deepEqual(codes({ ...select, durationInterval: 0, bookAheadUnit: 'days', bookAheadValue: 366 }), [
      ['durationInterval', 'SERVICE-112'],
      ['bookAheadValue', 'SETTINGS-105'],
    ]);
  });

  test('a durationMax at or below zero is one problem (SERVICE-114), not also "not divisible by durationInterval" (SERVICE-116)', () => {
    assert.deepEqual(codes({ ...select, durationMax: -10 }), [['durationMax', 'SERVICE-114']]);
    assert.deepEqual(codes({ ...select, durationMax: 0 }), [['durationMax', 'SERVICE-114']]);
  });
});

describe('allowedDurations', () => {
  test('without durationSelect only the duration', () => {
    assert.deepEqual(allowedDurations(plain), [30]);
    assert.deepEqual(allowedDurations({ ...select, durationSelect: false }), [60]);
  });

  test('with durationSelect: min to max in steps of the interval', () => {
    assert.deepEqual(allowedDurations(select), [30, 45, 60, 75, 90, 105, 120]);
    assert.deepEqual(allowedDurations({ ...select, durationMin: 60, durationMax: 180, durationInterval: 60 }), [60, 120, 180]);
  });

  test('steps start at the minimum, so the maximum is included only when it lies on a step', () => {
    assert.deepEqual(allowedDurations({ ...select, durationMin: 20, durationMax: 60, durationInterval: 15 }), [20, 35, 50]);
  });

  test('an incomplete duration-select setup falls back to the duration', () => {
    assert.deepEqual(allowedDurations({ ...select, durationInterval: 0 }), [60]);
    assert.deepEqual(allowedDurations({ ...select, durationMin: null }), [60]);
    assert.deepEqual(allowedDurations({ ...select, durationMax: 0 }), [60]);
  });

  // --- properties ---------------------------------------------------------------------------

  const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
  /** Duration-select setups built to satisfy SERVICE-112 to 116 and 125. */
  const validSelect = fc
    .record({ min: fc.integer({ min: 1, max: 240 }), factor: fc.integer({ min: 2, max: 12 }) })
    .chain(({ min, factor }) => {
      const max = min * factor;
      return fc.record({
        durationMin: fc.constant(min),
        durationMax: fc.constant(max),
        durationInterval: fc.constantFrom(...divisors(max)),
        duration: fc.integer({ min, max }),
      });
    })
    .map((s): ServiceSettings => ({ ...plain, durationSelect: true, ...s }));

  test('property: the built setups pass the rules', () => {
    fc.assert(fc.property(validSelect, (s) => serviceSettingProblems(s).length === 0));
  });

  test('property: for a setup that passes, every allowed duration lies in [min, max] and they step by the interval from min', () => {
    fc.assert(
      fc.property(validSelect, (s) => {
        assert.deepEqual(serviceSettingProblems(s), []);
        const options = allowedDurations(s);
        const min = s.durationMin!;
        const max = s.durationMax!;
        const interval = s.durationInterval!;
        assert.equal(options[0], min);
        assert.equal(options.length, Math.floor((max - min) / interval) + 1);
        for (const d of options) assert.ok(d >= min && d <= max, `${d} outside [${min}, ${max}]`);
        for (let i = 1; i < options.length; i++) assert.equal(options[i]! - options[i - 1]!, interval);
        assert.ok(options.at(-1)! + interval > max, 'no further step fits');
      }),
    );
  });

  test('property: random duration-select setups that pass the rules behave the same', () => {
    const anySelect = fc
      .record({
        duration: fc.integer({ min: 1, max: 600 }),
        durationMin: fc.option(fc.integer({ min: 0, max: 600 }), { nil: null }),
        durationMax: fc.option(fc.integer({ min: 0, max: 600 }), { nil: null }),
        durationInterval: fc.option(fc.integer({ min: 0, max: 120 }), { nil: null }),
      })
      .map((s): ServiceSettings => ({ ...plain, durationSelect: true, ...s }));
    fc.assert(
      fc.property(anySelect, (s) => {
        if (serviceSettingProblems(s).length > 0) return;
        const options = allowedDurations(s);
        assert.ok(options.length >= 1);
        assert.ok(options.every((d) => d >= s.durationMin! && d <= s.durationMax! && (d - s.durationMin!) % s.durationInterval! === 0));
      }),
    );
  });

  test('property: without durationSelect the only option is the duration, whatever min, max and interval say', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_080 }),
        fc.option(fc.integer({ min: 0, max: 10_080 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 10_080 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 10_080 }), { nil: null }),
        (duration, durationMin, durationMax, durationInterval) => {
          const s = { ...plain, duration, durationMin, durationMax, durationInterval };
          assert.deepEqual(allowedDurations(s), [duration]);
          assert.deepEqual(serviceSettingProblems(s), []);
        },
      ),
    );
  });

  test('property: book-ahead values pass exactly within 1..max of their unit', () => {
    const max = { days: 365, weeks: 52, months: 1440 } as const;
    fc.assert(
      fc.property(fc.constantFrom('days' as const, 'weeks' as const, 'months' as const), fc.integer({ min: -10, max: 2000 }), (unit, value) => {
        const problems = codes({ ...plain, bookAheadUnit: unit, bookAheadValue: value });
        assert.deepEqual(problems, value >= 1 && value <= max[unit] ? [] : [['bookAheadValue', 'SETTINGS-105']]);
      }),
    );
  });
});
