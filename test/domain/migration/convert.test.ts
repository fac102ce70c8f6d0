import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  allocationItems,
  appointmentFields,
  customerFields,
  instantOf,
  locationFields,
  militaryTime,
  resourceBlockToRecurringBlock,
  resourceFields,
  serviceFields,
  serviceLocationLegacyIds,
  timezone,
  v1Id,
  weeklyHours,
} from '../../../src/domain/migration/convert.js';
import type { Conversion, Ignored } from '../../../src/domain/migration/convert.js';
import type { V1Appointment, V1Export, V1ResourceBlock, V1Service, V1ServiceAllocation } from '../../../src/domain/migration/v1.js';
import { expandRecurrence } from '../../helpers/recurrence.js';
import { minutesOfDay } from '../../../src/domain/weekly-availability.js';
import { WINDOWS_ZONE_NAMES, windowsToIana } from '../../../src/domain/windows-zones.js';
import { ianaZoneOf } from '../../../src/modules/external-calendars/providers/microsoft.js';

/** The example export of shared/spec/v1-source.md §6, verbatim. */
const EXAMPLE: V1Export = JSON.parse(`{
 "locations": [{
  "object": "location", "id": "12", "name": "Downtown Studio",
  "primaryBusiness": true, "primaryCalendarId": "40", "email": "front@studio.example",
  "phone": "6175550100",
  "address": {"addressLine1": "10 Main St", "addressLine2": "Suite 2", "city": "Boston",
   "state": "MA", "postalCode": "02110", "country": "US"},
  "timezoneIana": "America/New_York", "timezoneId": "Eastern Standard Time", "timezoneOffset": null,
  "businessHours": {
   "sun": {"startTime": 0, "endTime": 0, "isOpen": false, "is24Hours": false},
   "mon": {"startTime": 900, "endTime": 1900, "isOpen": true, "is24Hours": false},
   "tue": {"startTime": 900, "endTime": 2100, "isOpen": true, "is24Hours": false},
   "wed": {"startTime": 900, "endTime": 1900, "isOpen": true, "is24Hours": false},
   "thu": {"startTime": 900, "endTime": 2100, "isOpen": true, "is24Hours": false},
   "fri": {"startTime": 900, "endTime": 1700, "isOpen": true, "is24Hours": false},
   "sat": {"startTime": 1000, "endTime": 1400, "isOpen": true, "is24Hours": false}},
  "businessHolidays": [{"id": "1", "holidayName": "Christmas Day", "businessClosed": true}],
  "services": [],
  "settings": {"bookAheadUnit": 2, "bookAheadValue": 8, "bookInAdvance": 60,
   "bookingTimerMins": 10}
 }],
 "services": [{
  "object": "service", "id": "301", "companyId": "5", "locationId": "12", "type": "1",
  "name": "Personal Training", "description": "One-to-one session", "duration": 60,
  "durationSelect": true, "durationMin": 30, "durationMax": 90, "durationInterval": 30,
  "bookingInterval": 30, "padding": 15, "consumerPadding": false, "maxCapacity": 1, "maxGroupSize": 1,
  "bookAheadUnit": 2, "bookAheadValue": 8, "bookInAdvance": 120,
  "bookingLimit": 2, "maxBookingLimit": 0, "maxResourceBookingLimit": 0,
  "dailyBookingLimitCount": 0, "dailyBookingLimitMinutes": 0,
  "feeAmount": 80.0, "feeTaxable": true, "cancellationFeeAmount": 20.0,
  "cancellationFeeTaxable": false, "nonRefundable": false, "roundRobin": 2,
  "imageUrl": "", "showOnline": true, "defaultService": true, "mediaPageUrl": "",
  "calendarId": "40", "calendarResourceGroupId": "", "serviceGroupId": null, "serviceGroupName": "",
  "availability": {"sun": {"startTime": 0, "endTime": 0}, "mon": {"startTime": 900, "endTime": 1900},
   "tue": {"startTime": 900, "endTime": 2100}, "wed": {"startTime": 900, "endTime": 1900},
   "thu": {"startTime": 900, "endTime": 2100}, "fri": {"startTime": 900, "endTime": 1700},
   "sat": {"startTime": 1000, "endTime": 1400}}
 }, {
  "object": "service", "id": "302", "locationId": "12", "type": "2",
  "name": "Evening Yoga Class", "description": "Group class", "duration": 90,
  "durationSelect": false, "durationMin": 0, "durationMax": 0, "durationInterval": 0,
  "bookingInterval": 90, "padding": 0, "consumerPadding": false, "maxCapacity": 12, "maxGroupSize": 2,
  "bookAheadUnit": 1, "bookAheadValue": 30, "bookInAdvance": 0,
  "bookingLimit": 0, "maxBookingLimit": 0, "maxResourceBookingLimit": 0,
  "dailyBookingLimitCount": 0, "dailyBookingLimitMinutes": 0,
  "feeAmount": 15.0, "feeTaxable": false, "cancellationFeeAmount": 0.0,
  "cancellationFeeTaxable": false, "nonRefundable": true, "roundRobin": 0,
  "imageUrl": "", "showOnline": true, "defaultService": false,
  "calendarId": "40", "serviceGroupId": 7, "serviceGroupName": "Classes",
  "availability": {"sun": {"startTime": 0, "endTime": 0}, "mon": {"startTime": 0, "endTime": 0},
   "tue": {"startTime": 1800, "endTime": 2100}, "wed": {"startTime": 0, "endTime": 0},
   "thu": {"startTime": 1800, "endTime": 2100}, "fri": {"startTime": 0, "endTime": 0},
   "sat": {"startTime": 0, "endTime": 0}}
 }],
 "resources": [{
  "object": "resource", "id": "1501", "locationId": "12", "name": "Ana Lopez",
  "email": "ana@studio.example", "groupId": null,
  "timezoneIana": "America/New_York", "timezoneId": "Eastern Standard Time", "timezoneOffset": null,
  "calendarAvailability": 0, "notificationType": 2, "deletedStatus": false,
  "services": [{"object": "service", "serviceId": 302, "serviceName": "Evening Yoga Class"}],
  "customFields": {"field1": "RYT-500"},
  "availability": {"sun": {"startTime": 0, "endTime": 0}, "mon": {"startTime": 0, "endTime": 0},
   "tue": {"startTime": 1700, "endTime": 2100}, "wed": {"startTime": 0, "endTime": 0},
   "thu": {"startTime": 1700, "endTime": 2100}, "fri": {"startTime": 0, "endTime": 0},
   "sat": {"startTime": 0, "endTime": 0}}
 }, {
  "object": "resource", "id": "1502", "locationId": "12", "name": "Ben Carter",
  "email": "ben@studio.example", "groupId": null,
  "timezoneIana": "America/New_York", "timezoneId": "Eastern Standard Time", "timezoneOffset": null,
  "calendarAvailability": 0, "notificationType": 1, "deletedStatus": false,
  "services": [],
  "customFields": {},
  "availability": {"sun": {"startTime": 0, "endTime": 0}, "mon": {"startTime": 900, "endTime": 1700},
   "tue": {"startTime": 900, "endTime": 1700}, "wed": {"startTime": 900, "endTime": 1700},
   "thu": {"startTime": 900, "endTime": 1700}, "fri": {"startTime": 900, "endTime": 1700},
   "sat": {"startTime": 0, "endTime": 0}}
 }],
 "serviceAllocations": [{
  "object": "serviceAllocation", "id": "7001", "serviceId": "302", "locationId": "12",
  "resourceId": "1501", "startDate": "2025-01-07", "endDate": "9999-12-31",
  "startTime": 1800, "endTime": 1930, "repeats": true,
  "repeat": {"frequency": "W", "interval": 1, "weekdays": "24", "monthDay": "", "monthType": ""},
  "reason": "Tue/Thu evening class", "bookingLimit": 12, "bookingCount": 0,
  "serviceName": "Evening Yoga Class", "serviceDuration": 90, "resourceName": "Ana Lopez",
  "timezoneName": "America/New_York", "timezoneOffset": null
 }],
 "resourceAllocations": [],
 "resourceBlocks": [{
  "object": "resourceBlock", "id": 88001, "resourceId": 1502, "businessId": 12,
  "startDate": "2025-01-06T00:00:00", "endDate": "9999-12-31T00:00:00",
  "startTime": 1200, "endTime": 1300, "reason": "Lunch break", "repeats": true,
  "repeat": {"frequency": "W", "interval": 1, "weekdays": "12345", "monthDay": "", "monthType": ""}
 }],
 "customers": [],
 "appointments": []
}`);

const NY = 'America/New_York';
const TODAY = '2025-03-01';
const NOW = Date.parse('2025-03-01T17:00:00Z');

/** The converted value, failing the test with the reason otherwise. */
function value<T>(result: Conversion<T> | Ignored): T {
  if (result.ok !== true) assert.fail(`expected a conversion, got ${result.ok}: ${result.reason}`);
  return result.value;
}
/** The problem's reason, checked against `pattern`. */
function reason(result: Conversion<unknown> | Ignored, pattern: RegExp): void {
  assert.equal(result.ok, false, `expected a problem, got ${JSON.stringify(result)}`);
  assert.match((result as { reason: string }).reason, pattern);
}
function ignoredBecause(result: Conversion<unknown> | Ignored, pattern: RegExp): void {
  assert.equal(result.ok, 'ignored', `expected ignored, got ${JSON.stringify(result)}`);
  assert.match((result as Ignored).reason, pattern);
}
const hours = (start: string, end: string) => [{ start, end }];
const isoUtc = (dt: DateTime) => dt.toUTC().toISO({ suppressMilliseconds: true });

describe('the §6 example export, row by row of §5', () => {
  const location = value(locationFields(EXAMPLE.locations![0]!));
  const services = EXAMPLE.services!.map((service) => value(serviceFields(service)));

  test('§5.2 location: ids, contact, address, zone, opening hours, timer; holidays and settings otherwise dropped', () => {
    assert.deepEqual(location.fields, {
      legacyId: '12',
      name: 'Downtown Studio',
      timezoneName: NY,
      phone: '6175550100',
      email: 'front@studio.example',
      address: { addressLine1: '10 Main St', addressLine2: 'Suite 2', city: 'Boston', state: 'MA', postalCode: '02110', country: 'US' },
      weeklyAvailability: {
        mon: hours('09:00', '19:00'),
        tue: hours('09:00', '21:00'),
        wed: hours('09:00', '19:00'),
        thu: hours('09:00', '21:00'),
        fri: hours('09:00', '17:00'),
        sat: hours('10:00', '14:00'),
      },
      bookingTimerMinutes: 10,
    });
    assert.equal(location.serviceLegacyIds, 'all', 'an empty services list offers every service');
  });

  test('§5.1 service 301 (type 1): every copied field, maxCapacity → bookingsPerSlot, BALANCED, rule 4 fields absent', () => {
    assert.deepEqual(services[0], {
      locationLegacyId: '12',
      fields: {
        legacyId: '301',
        name: 'Personal Training',
        description: 'One-to-one session',
        duration: 60,
        availabilityType: 'schedule',
        weeklyAvailability: location.fields.weeklyAvailability,
        bookingsPerSlot: 1,
        roundRobin: 'BALANCED',
        bookAheadUnit: 'weeks',
        bookAheadValue: 8,
        bookingInterval: 30,
        imageUrl: null,
        durationMin: 30,
        durationMax: 90,
        durationInterval: 30,
        bookInAdvance: 120,
        padding: 15,
        bookingLimit: 2,
        maxBookingLimit: 0,
        maxResourceBookingLimit: 0,
        dailyBookingLimitCount: 0,
        dailyBookingLimitMinutes: 0,
        durationSelect: true,
        feeTaxable: true,
        cancellationFeeTaxable: false,
        nonRefundable: false,
        showOnline: true,
        feeAmount: 80,
        cancellationFeeAmount: 20,
      },
    });
    const keys = Object.keys(services[0]!.fields);
    for (const dropped of ['serviceGroupId', 'serviceGroupName', 'calendarId', 'calendarResourceGroupId', 'mediaPageUrl', 'defaultService', 'consumerPadding', 'maxGroupSize', 'maxCapacity', 'companyId', 'object']) {
      assert.ok(!keys.includes(dropped), `${dropped} is not migrated`);
    }
  });

  test('§5.1 service 302 (type 2): allocation, NONE, bookingsPerSlot 12, days horizon, Tue/Thu evenings', () => {
    const fields = services[1]!.fields;
    assert.equal(fields.availabilityType, 'allocation');
    assert.equal(fields.roundRobin, 'NONE');
    assert.equal(fields.bookingsPerSlot, 12);
    assert.deepEqual([fields.bookAheadUnit, fields.bookAheadValue, fields.bookInAdvance], ['days', 30, 0]);
    assert.deepEqual(fields.weeklyAvailability, { tue: hours('18:00', '21:00'), thu: hours('18:00', '21:00') });
    assert.deepEqual([fields.durationSelect, fields.nonRefundable, fields.feeAmount, fields.cancellationFeeAmount], [false, true, 15, 0]);
    assert.deepEqual(serviceLocationLegacyIds(services[1]!, [location]), ['12']);
  });

  test('§5.3 resources: zone, home location, weekly hours (rule 5), services; custom fields not migrated', () => {
    const [ana, ben] = EXAMPLE.resources!.map((resource) => value(resourceFields(resource, NY)));
    assert.deepEqual(ana, {
      fields: { legacyId: '1501', name: 'Ana Lopez', email: 'ana@studio.example', timezoneName: NY, weeklyAvailability: { tue: hours('17:00', '21:00'), thu: hours('17:00', '21:00') } },
      locationLegacyIds: ['12'],
      serviceLegacyIds: ['302'],
    });
    assert.equal(ben!.serviceLegacyIds, 'all', 'resource 1502 offers all services');
    assert.deepEqual(ben!.fields.weeklyAvailability, { mon: hours('09:00', '17:00'), tue: hours('09:00', '17:00'), wed: hours('09:00', '17:00'), thu: hours('09:00', '17:00'), fri: hours('09:00', '17:00') });
  });

  test('§5.4 service allocation 7001: scope (12, 302, 1501), tue and thu 18:00-19:30, capacity 12, one legacyId', () => {
    const result = allocationItems(EXAMPLE.serviceAllocations![0]!, { today: TODAY, serviceCapacity: 12 });
    assert.deepEqual(value(result), {
      scope: { locationLegacyId: '12', serviceLegacyId: '302', resourceLegacyId: '1501' },
      weekly: [
        { day: 'tue', start: '18:00', end: '19:30', bookingsPerSlot: 12, legacyId: '7001' },
        { day: 'thu', start: '18:00', end: '19:30', bookingsPerSlot: 12, legacyId: '7001' },
      ],
      single: [],
    });
    assert.deepEqual((result as { warnings: string[] }).warnings, [], 'open end and a past start need no warning');
  });

  test('§5.5 resource block 88001: one WEEKLY rule Mon-Fri 12:00-13:00 in New York, open end', () => {
    assert.deepEqual(value(resourceBlockToRecurringBlock(EXAMPLE.resourceBlocks![0]!, NY)), {
      resourceLegacyId: '1502',
      fields: {
        legacyId: '88001',
        name: 'Lunch break',
        frequency: 'WEEKLY',
        interval: 1,
        weekdays: [1, 2, 3, 4, 5],
        dayOfMonth: null,
        startDate: '2025-01-06',
        endDate: null,
        startTime: '12:00',
        endTime: '13:00',
        iana: NY,
      },
    });
  });
});

describe('ids', () => {
  test('string and number ids normalise to one decimal string', () => {
    for (const id of [12, '12', ' 12 ', '0012']) assert.equal(value(v1Id(id)), '12');
    assert.equal(value(v1Id(0)), '0');
  });
  test('a missing, negative, fractional or non-decimal id is a problem', () => {
    reason(v1Id(null), /missing/);
    reason(v1Id(''), /missing/);
    reason(v1Id(-1), /not a whole non-negative number/);
    reason(v1Id(1.5), /not a whole non-negative number/);
    reason(v1Id('abc-1'), /"abc-1" is not a decimal number/);
  });
});

describe('military HHMM and weekly hours', () => {
  test('edges: 0 is 00:00, 2359, 2400 only as an end, numeric strings', () => {
    assert.equal(value(militaryTime(0, 'start')), '00:00');
    assert.equal(value(militaryTime(5, 'start')), '00:05');
    assert.equal(value(militaryTime(2359, 'end')), '23:59');
    assert.equal(value(militaryTime(2400, 'end')), '24:00');
    assert.equal(value(militaryTime('0930', 'start')), '09:30');
    reason(militaryTime(2400, 'start'), /start time 2400 is not a time of day \(HHMM from 0 to 2359\)/);
  });
  test('minutes over 59, hours over 23, negatives, fractions and non-numbers are problems', () => {
    reason(militaryTime(960, 'start'), /960 is not a time of day/);
    reason(militaryTime(2430, 'end'), /2430 is not a time of day \(HHMM from 0 to 2359, or 2400\)/);
    reason(militaryTime(-100, 'start'), /-100 is not a time of day/);
    reason(militaryTime(9.5, 'start'), /9.5 is not a military HHMM number/);
    reason(militaryTime(null, 'end'), /end time null is not a military HHMM number/);
  });
  test('closed days: 0/0, isOpen false whatever the times, a missing day; is24Hours is 00:00-24:00', () => {
    assert.deepEqual(
      value(
        weeklyHours({
          sun: { startTime: 0, endTime: 0 },
          mon: { startTime: 900, endTime: 1700, isOpen: false },
          tue: { startTime: 0, endTime: 0, isOpen: true, is24Hours: true },
          wed: { startTime: 0, endTime: 2400 },
          thu: null,
        }),
      ),
      { tue: hours('00:00', '24:00'), wed: hours('00:00', '24:00') },
    );
  });
  test('no hours at all is null (no weekly layer); every day closed is {}', () => {
    assert.equal(value(weeklyHours(undefined)), null);
    assert.equal(value(weeklyHours(null)), null);
    assert.deepEqual(value(weeklyHours({ mon: { startTime: 0, endTime: 0 } })), {});
  });
  test('a day that does not end after it starts, or a bad time, names the day', () => {
    reason(weeklyHours({ fri: { startTime: 2200, endTime: 200 } }), /^fri: 2200 to 200 does not end after it starts \(v3 weekly hours cannot cross midnight\)/);
    reason(weeklyHours({ sat: { startTime: 900, endTime: 900 } }), /^sat: 900 to 900 does not end after it starts/);
    reason(weeklyHours({ mon: { startTime: 975, endTime: 1700 } }), /^mon: startTime: start time 975 is not a time of day/);
  });
  test('property: any valid HHMM converts to the same minutes of the day, and a valid pair round-trips', () => {
    const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }));
    fc.assert(
      fc.property(hhmm, ([h, m]) => {
        assert.equal(minutesOfDay(value(militaryTime(h * 100 + m, 'start'))), h * 60 + m);
      }),
    );
    fc.assert(
      fc.property(hhmm, hhmm, ([h1, m1], [h2, m2]) => {
        const [a, b] = [h1 * 60 + m1, h2 * 60 + m2].sort((x, y) => x - y) as [number, number];
        const end = b === a ? 1440 : b;
        const military = (minutes: number) => Math.floor(minutes / 60) * 100 + (minutes % 60);
        const day = value(weeklyHours({ wed: { startTime: military(a), endTime: military(end) } }))!.wed!;
        assert.deepEqual([minutesOfDay(day[0]!.start), minutesOfDay(day[0]!.end)], [a, end]);
      }),
    );
  });
});

describe('time zones', () => {
  test('timezoneIana wins, with tzdb\'s capitals', () => {
    assert.equal(value(timezone({ timezoneIana: 'Asia/Kolkata', timezoneId: 'Tokyo Standard Time' })), 'Asia/Kolkata');
    assert.equal(value(timezone({ timezoneIana: 'america/new_york' })), NY);
    assert.equal(value(timezone({ timezoneIana: 'US/Eastern' })), 'US/Eastern', 'a link stays as named');
  });
  test('an empty timezoneIana falls to timezoneId as a Windows name (any case), or as an IANA name', () => {
    assert.equal(value(timezone({ timezoneIana: '', timezoneId: 'Eastern Standard Time' })), NY);
    assert.equal(value(timezone({ timezoneIana: null, timezoneId: 'india standard time' })), 'Asia/Kolkata');
    assert.equal(value(timezone({ timezoneId: 'Cen. Australia Standard Time' })), 'Australia/Adelaide');
    assert.equal(value(timezone({ timezoneId: 'Europe/Paris' })), 'Europe/Paris');
    assert.equal(value(timezone({ timezoneIana: 'AUS Eastern Standard Time' })), 'Australia/Sydney');
  });
  test('an unknown timezoneIana with a usable timezoneId warns and uses timezoneId', () => {
    const result = timezone({ timezoneIana: 'Mars/Olympus', timezoneId: 'GMT Standard Time' });
    assert.equal(value(result), 'Europe/London');
    assert.match((result as { warnings: string[] }).warnings[0]!, /timezoneIana "Mars\/Olympus" is not a known zone/);
  });
  test('both empty: the fallback; a named unknown zone is a problem even with a fallback; the offset is never used', () => {
    assert.equal(value(timezone({ timezoneIana: '', timezoneId: '' }, NY)), NY);
    reason(timezone({ timezoneIana: 'Mars/Olympus', timezoneId: 'Olympus Standard Time' }, NY), /"Mars\/Olympus" \/ "Olympus Standard Time" is neither an IANA zone nor a known Windows zone name/);
    reason(timezone({ timezoneOffset: -300 }), /no time zone: timezoneIana and timezoneId are both empty/);
  });
  test('the Outlook provider reads the same Windows table', () => {
    for (const name of WINDOWS_ZONE_NAMES) assert.equal(windowsToIana(name), ianaZoneOf(name), name);
  });
});

describe('services: rules 2 and 3 and the problems', () => {
  const base: V1Service = { id: '1', name: 'S', duration: 30 };
  test('type 1 or "1" or missing → schedule; 2 or "2" → allocation', () => {
    for (const type of [1, '1', undefined]) assert.equal(value(serviceFields({ ...base, type })).fields.availabilityType, 'schedule');
    for (const type of [2, '2']) assert.equal(value(serviceFields({ ...base, type })).fields.availabilityType, 'allocation');
  });
  test('roundRobin 0/1/2 (numbers or strings) → NONE/RANDOM/BALANCED; missing → NONE', () => {
    const map = (roundRobin: V1Service['roundRobin']) => value(serviceFields({ ...base, roundRobin })).fields.roundRobin;
    assert.deepEqual([map(0), map(1), map('2'), map(undefined)], ['NONE', 'RANDOM', 'BALANCED', 'NONE']);
  });
  test('maxCapacity 0 or missing → bookingsPerSlot 1; bookingInterval 0 → null; no horizon → null', () => {
    const fields = value(serviceFields({ ...base, maxCapacity: 0, bookingInterval: 0, bookAheadUnit: 0, bookAheadValue: 5 })).fields;
    assert.deepEqual([fields.bookingsPerSlot, fields.bookingInterval, fields.bookAheadUnit, fields.bookAheadValue], [1, null, 'none', null]);
  });
  test('custom fields field1..field10 are copied when the export carries them', () => {
    assert.deepEqual(value(serviceFields({ ...base, field1: 'a', field10: 'z', field11: 'no' })).fields.field1, 'a');
    assert.equal(value(serviceFields({ ...base, field10: 'z' })).fields.field10, 'z');
  });
  test('each problem names its field and says why', () => {
    reason(serviceFields({ ...base, type: 3 }), /^type: type 3 \(Meeting\) has no v3 availability type/);
    reason(serviceFields({ ...base, type: 'x' }), /^type: type "x" is not a v1 service type/);
    reason(serviceFields({ ...base, roundRobin: 3 }), /^roundRobin: 3 \(score\) has no v3 equivalent/);
    reason(serviceFields({ ...base, roundRobin: 4 }), /^roundRobin: 4 \(distance\) has no v3 equivalent/);
    reason(serviceFields({ ...base, roundRobin: 9 }), /^roundRobin: 9 is not a v1 round robin code/);
    reason(serviceFields({ ...base, name: ' ' }), /^name: the name is missing/);
    reason(serviceFields({ ...base, duration: 0 }), /^duration: 0 is not a whole number of at least 1/);
    reason(serviceFields({ ...base, bookAheadUnit: 9 }), /^bookAhead: 9 is not a v1 unit/);
    reason(serviceFields({ ...base, padding: -5 }), /^copied: padding: -5 is not a whole number/);
    reason(serviceFields({ ...base, feeAmount: -1 }), /^copied: feeAmount: -1 is not an amount/);
    reason(serviceFields({ ...base, id: undefined }), /^id: the id is missing/);
  });
});

describe('locations and resources: the problems and the drops', () => {
  test('a location without a zone, or with broken hours, is a problem', () => {
    reason(locationFields({ id: 1, name: 'L' }), /^timezone: no time zone/);
    reason(locationFields({ id: 1, name: 'L', timezoneIana: NY, businessHours: { mon: { startTime: 1700, endTime: 900, isOpen: true } } }), /^businessHours: mon: 1700 to 900/);
  });
  test('an address v3 cannot store is dropped with a warning; an out-of-range hold timer leaves the default', () => {
    const result = locationFields({ id: 1, name: 'L', timezoneIana: NY, address: { city: 'Boston', state: 'Massachusetts', country: 'US' }, settings: { bookingTimerMins: 45 } });
    assert.equal(value(result).fields.address, null);
    assert.equal(value(result).fields.bookingTimerMinutes, undefined);
    const warnings = (result as { warnings: string[] }).warnings;
    assert.match(warnings[0]!, /^address: dropped, .*"Massachusetts" is not a subdivision of US/i);
    assert.match(warnings[1]!, /bookingTimerMins 45 is outside v3's 1 to 30 minutes/);
  });
  test('a location listing services offers exactly those', () => {
    assert.deepEqual(value(locationFields({ id: 1, name: 'L', timezoneIana: NY, services: [{ serviceId: 301 }, { serviceId: '301' }] })).serviceLegacyIds, ['301']);
  });
  test('a resource without a zone takes its location\'s; a deleted one is ignored; a bad id is a problem', () => {
    assert.equal(value(resourceFields({ id: 5, name: 'R' }, 'Asia/Kolkata')).fields.timezoneName, 'Asia/Kolkata');
    ignoredBecause(resourceFields({ id: 5, name: 'R', deletedStatus: true }, NY), /deleted in v1/);
    reason(resourceFields({ id: 'x', name: 'R' }, NY), /^id: id "x" is not a decimal number/);
  });
});

describe('resource blocks → recurring blocks (rule 6)', () => {
  const block = (overrides: Partial<V1ResourceBlock>): V1ResourceBlock => ({ id: 1, resourceId: 2, startDate: '2025-03-09T00:00:00', endDate: '2025-03-09T00:00:00', startTime: 130, endTime: 330, reason: 'Off', repeats: false, ...overrides });
  const utc = (iso: string) => DateTime.fromISO(iso, { zone: 'utc' });

  test('a non-repeating block is one DAILY day; on the New York spring-forward day 01:30-03:30 lasts one real hour', () => {
    const fields = value(resourceBlockToRecurringBlock(block({}), NY)).fields;
    assert.deepEqual([fields.frequency, fields.interval, fields.startDate, fields.endDate, fields.weekdays], ['DAILY', 1, '2025-03-09', '2025-03-09', []]);
    const [occurrence] = expandRecurrence(fields, utc('2025-03-08T00:00:00Z'), utc('2025-03-11T00:00:00Z'));
    assert.deepEqual([isoUtc(occurrence!.start), isoUtc(occurrence!.end)], ['2025-03-09T06:30:00Z', '2025-03-09T07:30:00Z']);
  });
  test('a multi-day non-repeating block is the same daily window on each day', () => {
    const fields = value(resourceBlockToRecurringBlock(block({ endDate: '2025-03-11T00:00:00', startTime: 0, endTime: 2400 }), NY)).fields;
    assert.deepEqual([fields.startDate, fields.endDate, fields.startTime, fields.endTime], ['2025-03-09', '2025-03-11', '00:00', '24:00']);
  });
  test('fractional offsets: Asia/Kolkata 12:00-13:00 is 06:30-07:30 UTC; Australia/Adelaide across its DST end', () => {
    const kolkata = value(resourceBlockToRecurringBlock(block({ startTime: 1200, endTime: 1300, startDate: '2025-06-02', endDate: '9999-12-31', repeats: true, repeat: { frequency: 'W', interval: 1, weekdays: '1' } }), 'Asia/Kolkata')).fields;
    const [monday] = expandRecurrence(kolkata, utc('2025-06-01T00:00:00Z'), utc('2025-06-03T00:00:00Z'));
    assert.deepEqual([isoUtc(monday!.start), isoUtc(monday!.end)], ['2025-06-02T06:30:00Z', '2025-06-02T07:30:00Z']);
    const adelaide = value(resourceBlockToRecurringBlock(block({ startTime: 900, endTime: 1000, startDate: '2025-04-05', endDate: '2025-04-06', repeats: true, repeat: { frequency: 'D', interval: 1 } }), 'Australia/Adelaide')).fields;
    const days = expandRecurrence(adelaide, utc('2025-04-04T00:00:00Z'), utc('2025-04-07T00:00:00Z')).map((o) => isoUtc(o.start));
    assert.deepEqual(days, ['2025-04-04T22:30:00Z', '2025-04-05T23:30:00Z'], '+10:30 before, +09:30 after the change');
  });
  test('MONTHLY keeps monthDay; an overnight window stays overnight; no reason gets a name', () => {
    const fields = value(resourceBlockToRecurringBlock(block({ reason: '', repeats: true, startTime: 2200, endTime: 200, repeat: { frequency: 'M', interval: 2, monthDay: '15', monthType: 'D' } }), NY)).fields;
    assert.deepEqual([fields.frequency, fields.interval, fields.dayOfMonth, fields.weekdays, fields.startTime, fields.endTime, fields.name], ['MONTHLY', 2, 15, [], '22:00', '02:00', 'v1 block 1']);
    assert.deepEqual(value(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'W', weekdays: '' } }), NY)).fields.weekdays, [0], 'no weekdays: the start date\'s (a Sunday)');
  });
  test('each problem says why', () => {
    reason(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'M', monthType: 'M' } }), NY), /^repeat: monthType M \(a weekday of the nth week\) has no v3 equivalent/);
    reason(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'X' } }), NY), /repeat.frequency "X" is not D, W, M or Y/);
    reason(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'W', interval: 60, weekdays: '1' } }), NY), /repeat.interval 60 is outside 1 to 52 for WEEKLY/);
    reason(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'W', weekdays: '17' } }), NY), /weekdays "17" are not digits 0 \(Sunday\) to 6/);
    reason(resourceBlockToRecurringBlock(block({ repeats: true, repeat: { frequency: 'M', monthDay: '32' } }), NY), /monthDay "32" is not a day of the month/);
    reason(resourceBlockToRecurringBlock(block({ endDate: '2025-03-01' }), NY), /^dates: endDate 2025-03-01 is before startDate 2025-03-09/);
    reason(resourceBlockToRecurringBlock(block({ startDate: 'soon' }), NY), /^dates: startDate: "soon" is not a date/);
    reason(resourceBlockToRecurringBlock(block({ startTime: 900, endTime: 900 }), NY), /both 09:00: an empty block/);
    reason(resourceBlockToRecurringBlock(block({ resourceId: null }), NY), /^resourceId: the id is missing/);
  });
});

describe('allocations (§5.4)', () => {
  const allocation = (overrides: Partial<V1ServiceAllocation>): V1ServiceAllocation => ({ id: '9', serviceId: '302', locationId: '12', resourceId: '1501', startDate: '2025-02-20', endDate: '2025-03-03', startTime: 900, endTime: 1000, repeats: false, bookingLimit: 0, ...overrides });

  test('non-repeating: one single item per date from today on, capacity from the service when bookingLimit is 0', () => {
    const result = value(allocationItems(allocation({}), { today: TODAY, serviceCapacity: 4 }));
    assert.deepEqual(result.single.map((item) => item.date), ['2025-03-01', '2025-03-02', '2025-03-03']);
    assert.deepEqual(result.single[0], { date: '2025-03-01', start: '09:00', end: '10:00', bookingsPerSlot: 4, legacyId: '9' });
    assert.deepEqual(result.weekly, []);
  });
  test('D every day is all seven weekdays; a resource allocation is scoped by businessId, without capacity', () => {
    const result = value(allocationItems({ id: 3, resourceId: 1501, businessId: 12, startDate: '2025-01-01T00:00:00', endDate: '9999-12-31T00:00:00', startTime: 800, endTime: 1200, repeats: true, repeat: { frequency: 'D', interval: 1 } }, { today: TODAY }));
    assert.deepEqual(result.scope, { locationLegacyId: '12', serviceLegacyId: null, resourceLegacyId: '1501' });
    assert.deepEqual(result.weekly.map((item) => item.day), ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']);
    assert.equal(result.weekly[0]!.bookingsPerSlot, undefined);
  });
  test('a weekly rule with a future start or a finite end migrates with a warning; an ended one is ignored', () => {
    const result = allocationItems(allocation({ repeats: true, startDate: '2025-04-01', endDate: '2025-06-30', repeat: { frequency: 'W', interval: 1, weekdays: '1' } }), { today: TODAY });
    assert.deepEqual(value(result).weekly.map((item) => item.day), ['mon']);
    const warnings = (result as { warnings: string[] }).warnings;
    assert.match(warnings.join('\n'), /ends on 2025-06-30 in v1; v3 weekly allocations have no end date/);
    assert.match(warnings.join('\n'), /starts on 2025-04-01 in v1; v3 weekly allocations have no start date/);
    ignoredBecause(allocationItems(allocation({ repeats: true, startDate: '2025-01-01', endDate: '2025-02-01', repeat: { frequency: 'W', interval: 1, weekdays: '1' } }), { today: TODAY }), /ended on 2025-02-01/);
    ignoredBecause(allocationItems(allocation({ endDate: '2025-02-25' }), { today: TODAY }), /in the past \(2025-02-25\)/);
  });
  test('other repeats, overnight windows, long single ranges and a missing location are problems', () => {
    reason(allocationItems(allocation({ repeats: true, repeat: { frequency: 'W', interval: 2, weekdays: '1' } }), { today: TODAY }), /repeat "W" every 2: v3 weekly allocations repeat every week/);
    reason(allocationItems(allocation({ repeats: true, repeat: { frequency: 'M', interval: 1 } }), { today: TODAY }), /repeat "M" every 1/);
    reason(allocationItems(allocation({ startTime: 2200, endTime: 100 }), { today: TODAY }), /22:00 to 01:00: a v3 allocation ends after it starts on the same day/);
    reason(allocationItems(allocation({ endDate: '2026-12-31' }), { today: TODAY }), /a non-repeating allocation over 680 days/);
    reason(allocationItems(allocation({ locationId: '' }), { today: TODAY }), /^scope: locationId: the id is missing/);
    reason(allocationItems(allocation({ endDate: '9999-12-31' }), { today: TODAY }), /non-repeating allocation without an end date/);
  });
});

describe('customers', () => {
  test('names, the first phone v3 can store, custom fields; deleted ones ignored', () => {
    const result = customerFields({ id: 77, name: 'Mary Ann Smith', email: 'mary@example.com', contact: { mobilePhone: '123', businessPhone: '6175550100' }, customFields: { field2: { name: 'Pet', value: 'Cat' }, field3: 'x' } });
    assert.deepEqual(value(result).fields, { legacyId: '77', firstName: 'Mary', lastName: 'Ann Smith', email: 'mary@example.com', phone: '6175550100', field2: 'Cat', field3: 'x' });
    const noPhone = customerFields({ id: 78, firstname: 'Jo', email: 'jo@example.com', contact: { mobilePhone: '12' } });
    assert.equal(value(noPhone).fields.phone, null);
    assert.match((noPhone as { warnings: string[] }).warnings[0]!, /phone "12" dropped: v3 phones have 7 to 15 characters/);
    ignoredBecause(customerFields({ id: 1, email: 'a@b.co', firstname: 'A', deletedStatus: true }), /deleted in v1/);
  });
  test('no email, a bad email or no name is a problem', () => {
    reason(customerFields({ id: 1, firstname: 'A' }), /^email: missing \(v3 customers are matched by email\)/);
    reason(customerFields({ id: 1, firstname: 'A', email: 'not-an-email' }), /^email: "not-an-email" is not an email address/);
    reason(customerFields({ id: 1, email: 'a@b.co' }), /^names: no firstname or name/);
  });
});

describe('appointments: statuses, today on, exact times', () => {
  const appointment = (overrides: Partial<V1Appointment>): V1Appointment => ({ id: '500', locationId: '12', serviceId: '301', resourceId: '1502', customerId: '77', status: 'BK', startDateTime: '2025-03-10T09:00:00', endDateTime: '2025-03-10T10:00:00', ...overrides });
  const convert = (overrides: Partial<V1Appointment>, locationZone = NY) => appointmentFields(appointment(overrides), { now: NOW, locationZone });

  test('a booked appointment: ids, status, UTC times, duration, links', () => {
    assert.deepEqual(value(convert({ confirmed: true, notes: 'Bring mat', resources: [{ resourceId: 1502 }, { resourceId: '1501' }] })), {
      fields: { legacyId: '500', status: 'BK', startTime: '2025-03-10T13:00:00Z', endTime: '2025-03-10T14:00:00Z', duration: 60, timezoneName: NY, confirmed: true, notes: 'Bring mat' },
      locationLegacyId: '12',
      serviceLegacyId: '301',
      resourceLegacyIds: ['1502', '1501'],
      customerLegacyId: '77',
      contact: null,
    });
  });
  test('BK, RS, CN and RE keep their status; IN, unknown and missing statuses do not migrate', () => {
    for (const status of ['BK', 'RS', 'CN', 'RE', 'rs']) assert.equal(value(convert({ status })).fields.status, status.toUpperCase());
    ignoredBecause(convert({ status: 'IN' }), /a v1 hold \(IN\)/);
    reason(convert({ status: 'XX' }), /status "XX" is not IN, BK, RS, CN or RE/);
    reason(convert({ status: undefined }), /status undefined is not/);
  });
  test('only from today on, today being the location\'s: earlier today migrates, yesterday does not', () => {
    assert.equal(value(convert({ startDateTime: '2025-03-01T08:00:00', endDateTime: '2025-03-01T09:00:00' })).fields.startTime, '2025-03-01T13:00:00Z');
    ignoredBecause(convert({ startDateTime: '2025-02-28T23:00:00', endDateTime: '2025-02-28T23:30:00' }), /starts on 2025-02-28, before today \(2025-03-01\)/);
  });
  test('New York spring forward: 01:30-03:30 wall time is one real hour; 02:30 (skipped) is 03:30 EDT', () => {
    const result = value(convert({ startDateTime: '2025-03-09T01:30:00', endDateTime: '2025-03-09T03:30:00' }));
    assert.deepEqual([result.fields.startTime, result.fields.endTime, result.fields.duration], ['2025-03-09T06:30:00Z', '2025-03-09T07:30:00Z', 60]);
    assert.equal(value(convert({ startDateTime: '2025-03-09T02:30:00', endDateTime: undefined, duration: 30 })).fields.startTime, '2025-03-09T07:30:00Z');
  });
  test('an explicit offset is exact, "-5:00" included; one the zone did not have then is used with a warning', () => {
    const result = convert({ startDateTime: '2025-03-10T09:00:00-5:00', endDateTime: '2025-03-10T10:00:00-05:00' });
    assert.deepEqual([value(result).fields.startTime, value(result).fields.endTime], ['2025-03-10T14:00:00Z', '2025-03-10T15:00:00Z']);
    assert.match((result as { warnings: string[] }).warnings[0]!, /states offset -05:00 where America\/New_York was at -04:00; the stated offset is used/);
    const utc = convert({ startDateTime: '2025-03-10T13:00:00Z', endDateTime: '2025-03-10T14:00:00Z' });
    assert.deepEqual([value(utc).fields.startTime, (utc as { warnings: string[] }).warnings], ['2025-03-10T13:00:00Z', []]);
  });
  test('fractional offsets: Asia/Kolkata +05:30; Australia/Adelaide\'s repeated 02:30 is the first (+10:30)', () => {
    const kolkata = value(convert({ startDateTime: '2025-06-02T10:00:00', endDateTime: '2025-06-02T10:45:00' }, 'Asia/Kolkata'));
    assert.deepEqual([kolkata.fields.startTime, kolkata.fields.duration, kolkata.fields.timezoneName], ['2025-06-02T04:30:00Z', 45, 'Asia/Kolkata']);
    const adelaide = value(convert({ startDateTime: '2025-04-06T02:30:00', endDateTime: '2025-04-06T03:30:00' }, 'Australia/Adelaide'));
    assert.deepEqual([adelaide.fields.startTime, adelaide.fields.endTime, adelaide.fields.duration], ['2025-04-05T16:00:00Z', '2025-04-05T18:00:00Z', 120]);
  });
  test('wall times are read in the appointment\'s own zone (Windows name), the stored zone stays the location\'s', () => {
    const result = value(convert({ timezoneIana: '', timezoneId: 'India Standard Time', startDateTime: '2025-03-10T19:30:00', endDateTime: '2025-03-10T20:30:00' }));
    assert.deepEqual([result.fields.startTime, result.fields.timezoneName], ['2025-03-10T14:00:00Z', NY]);
  });
  test('without a customer the booker\'s contact goes along; several customers link the first with a warning', () => {
    assert.deepEqual(value(convert({ customerId: '', name: 'Walk In', email: 'walk@in.example', phone: '6175550199' })).contact, { name: 'Walk In', email: 'walk@in.example', phone: '6175550199' });
    const many = convert({ customerId: '', customers: [{ customerId: 1 }, { customerId: 2 }] });
    assert.equal(value(many).customerLegacyId, '1');
    assert.match((many as { warnings: string[] }).warnings[0]!, /2 customers in v1; v3 links one \(1\)/);
  });
  test('bad times and missing ids are problems', () => {
    reason(convert({ startDateTime: 'tomorrow' }), /startDateTime: "tomorrow" is not an ISO 8601 date and time/);
    reason(convert({ startDateTime: '2025-02-30T09:00:00' }), /startDateTime: .* is not a valid date and time/);
    reason(convert({ endDateTime: '2025-03-10T08:00:00' }), /is not after startDateTime/);
    reason(convert({ endDateTime: null, duration: 0 }), /neither endDateTime nor a duration/);
    reason(convert({ serviceId: null }), /^serviceId: the id is missing/);
    reason(convert({ timezoneIana: 'Nowhere/City' }), /^timezone: time zone "Nowhere\/City" is neither/);
  });
  test('instantOf rejects text without a time', () => {
    reason(instantOf('2025-03-10', NY), /not an ISO 8601 date and time/);
  });
});
