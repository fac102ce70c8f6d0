import { DateTime } from 'luxon';
import { normalizeAddress, addressProblems } from '../address.js';
import type { Address } from '../address.js';
import { addDays, localDate, localToInstant, weekdayIndex } from '../local-time.js';
import type { Frequency } from '../recurrence.js';
import { minutesOfDay } from '../weekly-availability.js';
import type { Weekday, WeeklySchedule } from '../weekly-availability.js';
import { validIana, windowsToIana } from '../windows-zones.js';
import { V1_DAYS } from './v1.js';
import type {
  V1Appointment,
  V1CustomFields,
  V1Customer,
  V1DayHours,
  V1Location,
  V1Repeat,
  V1Resource,
  V1ResourceAllocation,
  V1ResourceBlock,
  V1Service,
  V1ServiceAllocation,
  V1WeeklyHours,
  V1Zone,
} from './v1.js';

/**
 * v1 → v3 conversion of single records (shared/spec/v1-source.md §4-§5, core-interface.md
 * "Migration and mapping"). Pure: no database, no HTTP, no clock (the caller passes `now` or
 * `today`). Bad data is answered, never thrown: a Problem names what v3 cannot take, so the
 * importer reports that one record and goes on. References to other records stay v1 ids
 * (`…LegacyId`) for the importer to resolve.
 */

// --- Results ----------------------------------------------------------------------------------

/** Converted; `warnings` say what was dropped or bent on the way (the record still migrates). */
export interface Converted<T> {
  ok: true;
  value: T;
  warnings: string[];
}
/** v3 cannot take the record as it is. */
export interface Problem {
  ok: false;
  reason: string;
}
/** A record deliberately left behind (deleted in v1, in the past, a v1 hold): not a failure. */
export interface Ignored {
  ok: 'ignored';
  reason: string;
}
export type Conversion<T> = Converted<T> | Problem;

const converted = <T>(value: T, warnings: string[] = []): Converted<T> => ({ ok: true, value, warnings });
const problem = (reason: string): Problem => ({ ok: false, reason });
const ignored = (reason: string): Ignored => ({ ok: 'ignored', reason });

type Values<T> = { [K in keyof T]: T[K] extends Conversion<infer V> ? V : never };

/** Every part converted, or the first problem prefixed with the part's (v1 field) name. */
function all<T extends Record<string, Conversion<unknown>>>(parts: T): Conversion<Values<T>> {
  const values: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const [key, part] of Object.entries(parts)) {
    if (!part.ok) return problem(`${key}: ${part.reason}`);
    values[key] = part.value;
    warnings.push(...part.warnings);
  }
  return converted(values as Values<T>, warnings);
}

// --- Small readers ----------------------------------------------------------------------------

const show = (value: unknown) => JSON.stringify(value) ?? String(value);

/** A non-empty trimmed string, else null. */
function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

function required(value: unknown, what: string): Conversion<string> {
  const found = text(value);
  return found === null ? problem(`${what} is missing`) : converted(found);
}

/** A whole number ≥ min when present; missing or null → undefined (v3's default applies). */
function wholeNumber(value: unknown, min = 0): Conversion<number | undefined> {
  if (value === undefined || value === null) return converted(undefined);
  return Number.isSafeInteger(value) && (value as number) >= min ? converted(value as number) : problem(`${show(value)} is not a whole number of at least ${min}`);
}

function amount(value: unknown): Conversion<number | null | undefined> {
  if (value === undefined) return converted(undefined);
  if (value === null) return converted(null);
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? converted(value) : problem(`${show(value)} is not an amount of at least 0`);
}

const flag = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);

// --- Ids --------------------------------------------------------------------------------------

/** A v1 id (string or int32, §4) as a decimal string, so "0012", "12" and 12 match. */
export function v1Id(value: unknown): Conversion<string> {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? converted(String(value)) : problem(`id ${value} is not a whole non-negative number`);
  }
  const id = text(value);
  if (id === null) return problem('the id is missing');
  return /^\d+$/.test(id) ? converted(id.replace(/^0+(?=\d)/, '')) : problem(`id ${show(value)} is not a decimal number`);
}

/**
 * A stored or asked-for legacy id in the form the importer keys on: v1's decimal form when it is
 * one ("0012" → "12", as `v1Id` converts it), else the text as it is. The one normaliser of v1 ids.
 */
export function canonicalV1Id(value: string): string {
  const id = v1Id(value.trim());
  return id.ok ? id.value : value;
}

/** A reference that may be absent: "", null and 0 name nothing (v1 uses service id 0 for "all"). */
function optionalId(value: unknown): Conversion<string | null> {
  const none = value === undefined || value === null || value === 0 || (typeof value === 'string' && ['', '0'].includes(value.trim()));
  return none ? converted(null) : v1Id(value);
}

// --- Military HHMM and weekly hours ------------------------------------------------------------

/** Military HHMM (900 = 09:00) → "HH:MM"; 2400 → "24:00", allowed only as an end. */
export function militaryTime(value: unknown, role: 'start' | 'end'): Conversion<string> {
  const number = typeof value === 'string' && /^\d{1,4}$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) return problem(`${role} time ${show(value)} is not a military HHMM number`);
  if (number === 2400 && role === 'end') return converted('24:00');
  const hours = Math.floor(number / 100);
  const minutes = number % 100;
  if (number < 0 || hours > 23 || minutes > 59) {
    return problem(`${role} time ${number} is not a time of day (HHMM from 0 to 2359${role === 'end' ? ', or 2400' : ''})`);
  }
  return converted(`${String(hours).padStart(2, '0')}:${String(minutes).padStart(2, '0')}`);
}

interface TimeWindow {
  start: string;
  end: string;
}

function militaryWindow(start: unknown, end: unknown): Conversion<TimeWindow> {
  const times = all({ startTime: militaryTime(start, 'start'), endTime: militaryTime(end, 'end') });
  return times.ok ? converted({ start: times.value.startTime, end: times.value.endTime }) : times;
}

/** One day of weekly hours: null when closed. */
function dayWindow(hours: V1DayHours | null | undefined): Conversion<TimeWindow | null> {
  if (!hours || hours.isOpen === false) return converted(null);
  if (hours.is24Hours === true) return converted({ start: '00:00', end: '24:00' });
  const start = hours.startTime ?? 0;
  const end = hours.endTime ?? 0;
  if (start === 0 && end === 0) return converted(null);
  const window = militaryWindow(start, end);
  if (!window.ok) return window;
  if (minutesOfDay(window.value.end) <= minutesOfDay(window.value.start)) {
    return problem(`${start} to ${end} does not end after it starts (v3 weekly hours cannot cross midnight)`);
  }
  return converted(window.value);
}

/**
 * v1 weekly hours (services, resources, location businessHours) → a v3 weekly schedule. A closed
 * day (0/0, or isOpen false) is left out; is24Hours is 00:00-24:00. No hours at all → null (no
 * weekly layer), which differs from every day closed ({}).
 */
export function weeklyHours(availability: V1WeeklyHours | null | undefined): Conversion<WeeklySchedule | null> {
  if (availability === null || availability === undefined) return converted(null);
  const schedule: WeeklySchedule = {};
  for (const day of V1_DAYS) {
    const window = dayWindow(availability[day]);
    if (!window.ok) return problem(`${day}: ${window.reason}`);
    if (window.value) schedule[day] = [window.value];
  }
  return converted(schedule);
}

// --- Time zones -------------------------------------------------------------------------------

/**
 * The IANA zone of a v1 record: timezoneIana when Luxon knows it, else timezoneId read as a
 * Windows name (or an IANA name), else `fallback` when both are empty. Never from timezoneOffset:
 * an offset names no daylight-saving rule. A zone named but unknown is a problem, not the fallback,
 * so no record's times are silently read in another zone.
 */
export function timezone(zone: V1Zone, fallback?: string | null): Conversion<string> {
  const iana = text(zone.timezoneIana);
  const windows = text(zone.timezoneId);
  const fromIana = iana === null ? null : (validIana(iana) ?? windowsToIana(iana));
  if (fromIana) return converted(fromIana);
  const fromWindows = windows === null ? null : (windowsToIana(windows) ?? validIana(windows));
  if (fromWindows) {
    return converted(fromWindows, iana ? [`timezoneIana ${show(iana)} is not a known zone; timezoneId ${show(windows)} (${fromWindows}) is used`] : []);
  }
  if (iana !== null || windows !== null) {
    return problem(`time zone ${[iana, windows].filter(Boolean).map(show).join(' / ')} is neither an IANA zone nor a known Windows zone name`);
  }
  return fallback ? converted(fallback) : problem('no time zone: timezoneIana and timezoneId are both empty');
}

// --- Custom fields ----------------------------------------------------------------------------

type CustomFieldName = `field${1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10}`;
export type CustomFieldValues = Partial<Record<CustomFieldName, string>>;
const CUSTOM_FIELDS: CustomFieldName[] = ['field1', 'field2', 'field3', 'field4', 'field5', 'field6', 'field7', 'field8', 'field9', 'field10'];

/** field1 … field10 from an object whose values are strings or v1 `{name, value}` views. */
function customFields(source: V1CustomFields | V1Service | null | undefined): CustomFieldValues {
  const values: CustomFieldValues = {};
  for (const name of CUSTOM_FIELDS) {
    const raw: unknown = (source as Record<string, unknown> | null | undefined)?.[name];
    const value = typeof raw === 'object' && raw !== null ? (raw as { value?: unknown }).value : raw;
    if (typeof value === 'string' && value !== '') values[name] = value;
  }
  return values;
}

// --- Services ---------------------------------------------------------------------------------

export type AvailabilityType = 'schedule' | 'allocation';
export type RoundRobin = 'NONE' | 'RANDOM' | 'BALANCED' | 'COMBINED';
export type BookAheadUnit = 'none' | 'days' | 'weeks' | 'months';

/** The v3 service body (src/modules/services/schemas.ts) without locationIds. */
export interface ServiceFields extends CustomFieldValues {
  legacyId: string;
  name: string;
  description: string | null;
  duration: number;
  availabilityType: AvailabilityType;
  weeklyAvailability: WeeklySchedule | null;
  bookingsPerSlot: number;
  roundRobin: RoundRobin;
  bookAheadUnit?: BookAheadUnit;
  bookAheadValue?: number | null;
  bookingInterval?: number | null;
  imageUrl: string | null;
  durationSelect?: boolean;
  feeTaxable?: boolean;
  cancellationFeeTaxable?: boolean;
  nonRefundable?: boolean;
  showOnline?: boolean;
  feeAmount?: number | null;
  cancellationFeeAmount?: number | null;
  durationMin?: number;
  durationMax?: number;
  durationInterval?: number;
  bookInAdvance?: number;
  padding?: number;
  bookingLimit?: number;
  maxBookingLimit?: number;
  maxResourceBookingLimit?: number;
  dailyBookingLimitCount?: number;
  dailyBookingLimitMinutes?: number;
}

export interface ServiceImport {
  fields: ServiceFields;
  /** The v1 owning location; the locations offering it come from serviceLocationLegacyIds. */
  locationLegacyId: string | null;
}

/** Rule 2: type 1 (Appointment, the v1 default) → schedule, 2 (Event) → allocation. */
function availabilityTypeOf(type: unknown): Conversion<AvailabilityType> {
  const code = type === undefined || type === null || type === '' ? '1' : String(type).trim();
  if (code === '1') return converted('schedule');
  if (code === '2') return converted('allocation');
  if (code === '3') return problem('type 3 (Meeting) has no v3 availability type; only 1 (Appointment) and 2 (Event) migrate');
  return problem(`type ${show(type)} is not a v1 service type (1 Appointment, 2 Event)`);
}

const ROUND_ROBIN: Record<string, RoundRobin> = { '0': 'NONE', '1': 'RANDOM', '2': 'BALANCED' };

/** Rule 3: 0 none, 1 random, 2 balanced. 3 (score) and 4 (distance) have no v3 counterpart. */
function roundRobinOf(value: unknown): Conversion<RoundRobin> {
  if (value === undefined || value === null || value === '') return converted('NONE');
  const mapped = ROUND_ROBIN[String(value).trim()];
  if (mapped) return converted(mapped);
  if (String(value) === '3' || String(value) === '4') {
    const name = String(value) === '3' ? 'score' : 'distance';
    return problem(`${value} (${name}) has no v3 equivalent (NONE, RANDOM, BALANCED, COMBINED); set 0, 1 or 2 in v1 and run again`);
  }
  return problem(`${show(value)} is not a v1 round robin code (0 none, 1 random, 2 balanced)`);
}

const BOOK_AHEAD_UNITS: BookAheadUnit[] = ['none', 'days', 'weeks', 'months'];

/** SETTINGS-104 codes 0-3; a value of 0, or the unit none, means no horizon (v3 null). */
function bookAhead(unit: unknown, value: unknown): Conversion<{ unit?: BookAheadUnit; value?: number | null }> {
  if (unit === undefined || unit === null) return converted({});
  const name = typeof unit === 'number' ? BOOK_AHEAD_UNITS[unit] : undefined;
  if (!name) return problem(`${show(unit)} is not a v1 unit (0 none, 1 days, 2 weeks, 3 months)`);
  const amount = wholeNumber(value);
  if (!amount.ok) return amount;
  return converted({ unit: name, value: name === 'none' || !amount.value ? null : amount.value });
}

const COUNT_FIELDS = [
  'durationMin',
  'durationMax',
  'durationInterval',
  'bookInAdvance',
  'padding',
  'bookingLimit',
  'maxBookingLimit',
  'maxResourceBookingLimit',
  'dailyBookingLimitCount',
  'dailyBookingLimitMinutes',
] as const;
const FLAG_FIELDS = ['durationSelect', 'feeTaxable', 'cancellationFeeTaxable', 'nonRefundable', 'showOnline'] as const;

/** Rule 1's counts and flags, copied under the same names; missing ones take v3's defaults. */
function copiedServiceFields(service: V1Service): Conversion<Partial<ServiceFields>> {
  const fields: Partial<ServiceFields> = {};
  for (const name of COUNT_FIELDS) {
    const count = wholeNumber(service[name]);
    if (!count.ok) return problem(`${name}: ${count.reason}`);
    if (count.value !== undefined) fields[name] = count.value;
  }
  for (const name of FLAG_FIELDS) {
    const value = flag(service[name]);
    if (value !== undefined) fields[name] = value;
  }
  const fees = all({ feeAmount: amount(service.feeAmount), cancellationFeeAmount: amount(service.cancellationFeeAmount) });
  if (!fees.ok) return fees;
  if (fees.value.feeAmount !== undefined) fields.feeAmount = fees.value.feeAmount;
  if (fees.value.cancellationFeeAmount !== undefined) fields.cancellationFeeAmount = fees.value.cancellationFeeAmount;
  return converted(fields);
}

/**
 * Rules 1-4: the service fields copied, maxCapacity → bookingsPerSlot, type → availabilityType,
 * roundRobin → its name; rule 4's fields (serviceGroupId, calendarId, mediaPageUrl, defaultService,
 * consumerPadding, maxGroupSize, …) are not read at all.
 */
export function serviceFields(service: V1Service): Conversion<ServiceImport> {
  const parts = all({
    id: v1Id(service.id),
    name: required(service.name, 'the name'),
    type: availabilityTypeOf(service.type),
    roundRobin: roundRobinOf(service.roundRobin),
    duration: wholeNumber(service.duration ?? 0, 1),
    availability: weeklyHours(service.availability),
    bookAhead: bookAhead(service.bookAheadUnit, service.bookAheadValue),
    bookingInterval: wholeNumber(service.bookingInterval),
    maxCapacity: wholeNumber(service.maxCapacity),
    copied: copiedServiceFields(service),
    locationId: optionalId(service.locationId),
  });
  if (!parts.ok) return parts;
  const p = parts.value;
  const fields: ServiceFields = {
    legacyId: p.id,
    name: p.name,
    description: typeof service.description === 'string' ? service.description : null,
    duration: p.duration!,
    availabilityType: p.type,
    weeklyAvailability: p.availability,
    // v1 0 means unset; v3 needs at least one booking per slot.
    bookingsPerSlot: p.maxCapacity || 1,
    roundRobin: p.roundRobin,
    ...(p.bookAhead.unit ? { bookAheadUnit: p.bookAhead.unit, bookAheadValue: p.bookAhead.value } : {}),
    // v1 0 means unset; v3 null means "the duration".
    ...(p.bookingInterval !== undefined ? { bookingInterval: p.bookingInterval || null } : {}),
    imageUrl: text(service.imageUrl),
    ...p.copied,
    ...customFields(service),
  };
  return converted({ fields, locationLegacyId: p.locationId }, parts.warnings);
}

/**
 * The v1 locations offering a service (§5, end): a location whose services list is empty offers
 * every service, a non-empty list exactly those; the service's own location always offers it.
 */
export function serviceLocationLegacyIds(service: ServiceImport, locations: LocationImport[]): string[] {
  const ids = new Set<string>();
  if (service.locationLegacyId !== null) ids.add(service.locationLegacyId);
  for (const location of locations) {
    const offered = location.serviceLegacyIds;
    if (offered === 'all' || offered.includes(service.fields.legacyId)) ids.add(location.fields.legacyId);
  }
  return [...ids];
}

// --- Locations --------------------------------------------------------------------------------

/** The v3 location body (src/modules/locations/schemas.ts). */
export interface LocationFields {
  legacyId: string;
  name: string;
  timezoneName: string;
  phone: string | null;
  email: string | null;
  address: Address | null;
  weeklyAvailability: WeeklySchedule | null;
  bookingTimerMinutes?: number;
}

export interface LocationImport {
  fields: LocationFields;
  /** v1 ids of the services offered here; 'all' when v1 lists none. */
  serviceLegacyIds: string[] | 'all';
}

const ADDRESS_KEYS = ['addressLine1', 'addressLine2', 'city', 'state', 'postalCode'] as const;

/** The six v1 address keys; an address v3 cannot store (no or non-ISO country) is dropped, not fatal. */
function addressOf(source: V1Location['address']): Converted<Address | null> {
  if (!source) return converted(null);
  const country = text(source.country);
  const address: Address = { country: country ?? '' };
  for (const key of ADDRESS_KEYS) {
    const value = text(source[key]);
    if (value !== null) address[key] = value;
  }
  if (country === null) {
    return converted(null, Object.keys(address).length > 1 ? ['address: dropped, v3 addresses need an ISO 3166 country'] : []);
  }
  const normalized = normalizeAddress(address);
  const problems = addressProblems(normalized);
  return problems.length ? converted(null, [`address: dropped, ${problems.map((p) => p.msg).join('; ')}`]) : converted(normalized);
}

/** bookingTimerMins → bookingTimerMinutes (v3 1-30); 0 or missing leaves v3's default of 10. */
function bookingTimer(settings: V1Location['settings']): Converted<number | undefined> {
  const minutes = settings?.bookingTimerMins;
  if (minutes === undefined || minutes === null || minutes === 0) return converted(undefined);
  if (Number.isInteger(minutes) && minutes >= 1 && minutes <= 30) return converted(minutes);
  return converted(undefined, [`settings.bookingTimerMins ${minutes} is outside v3's 1 to 30 minutes; v3's default of 10 applies`]);
}

function offeredServices(services: V1Location['services']): Conversion<string[] | 'all'> {
  if (!services?.length) return converted('all');
  const ids: string[] = [];
  for (const item of services) {
    const id = v1Id(item.serviceId);
    if (!id.ok) return problem(`serviceId: ${id.reason}`);
    ids.push(id.value);
  }
  return converted([...new Set(ids)]);
}

/** §5.2: a location with its zone, opening hours (businessHours) and the services it offers. */
export function locationFields(location: V1Location): Conversion<LocationImport> {
  const parts = all({
    id: v1Id(location.id),
    name: required(location.name, 'the name'),
    timezone: timezone(location),
    businessHours: weeklyHours(location.businessHours),
    services: offeredServices(location.services),
    address: addressOf(location.address),
    timer: bookingTimer(location.settings),
  });
  if (!parts.ok) return parts;
  const p = parts.value;
  const fields: LocationFields = {
    legacyId: p.id,
    name: p.name,
    timezoneName: p.timezone,
    phone: text(location.phone),
    email: text(location.email),
    address: p.address,
    weeklyAvailability: p.businessHours,
    ...(p.timer !== undefined ? { bookingTimerMinutes: p.timer } : {}),
  };
  return converted({ fields, serviceLegacyIds: p.services }, parts.warnings);
}

// --- Resources --------------------------------------------------------------------------------

/** The v3 resource body (src/modules/resources/schemas.ts) without locationIds and serviceIds. */
export interface ResourceFields {
  legacyId: string;
  name: string;
  email: string | null;
  timezoneName: string;
  weeklyAvailability: WeeklySchedule | null;
}

export interface ResourceImport {
  fields: ResourceFields;
  locationLegacyIds: string[];
  /** 'all' when v1 lists none: every service offered at its locations. */
  serviceLegacyIds: string[] | 'all';
}

/**
 * §5.3 and rule 5: the weekly hours are copied whatever the resource's mode (in allocation mode
 * they are for display; allocations stay the booking source). `locationZone` is the home
 * location's zone, used when the resource names none.
 */
export function resourceFields(resource: V1Resource, locationZone: string): Conversion<ResourceImport> | Ignored {
  if (resource.deletedStatus === true) return ignored('deleted in v1 (deletedStatus)');
  const parts = all({
    id: v1Id(resource.id),
    name: required(resource.name, 'the name'),
    timezone: timezone(resource, locationZone),
    availability: weeklyHours(resource.availability),
    locationId: optionalId(resource.locationId),
    services: offeredServices(resource.services),
  });
  if (!parts.ok) return parts;
  const p = parts.value;
  const fields: ResourceFields = { legacyId: p.id, name: p.name, email: text(resource.email), timezoneName: p.timezone, weeklyAvailability: p.availability };
  return converted({ fields, locationLegacyIds: p.locationId === null ? [] : [p.locationId], serviceLegacyIds: p.services }, parts.warnings);
}

// --- Dates and repeats of blocks and allocations ----------------------------------------------

/** `endDate` 9999-12-31 repeats without end (§4). */
const OPEN_END = '9999-12-31';

/** The date part of a v1 date or date-time (the time of day lives in startTime/endTime). */
function datePart(value: unknown): Conversion<string> {
  const date = text(value)?.slice(0, 10) ?? null;
  if (date === null) return problem('missing');
  return /^\d{4}-\d{2}-\d{2}$/.test(date) && DateTime.fromISO(date).isValid ? converted(date) : problem(`${show(value)} is not a date`);
}

/** Start date and end date (null: open end; missing: the start date), end not before start. */
function dateRange(startValue: unknown, endValue: unknown): Conversion<{ startDate: string; endDate: string | null }> {
  const start = datePart(startValue);
  if (!start.ok) return problem(`startDate: ${start.reason}`);
  if (endValue === undefined || endValue === null || endValue === '') return converted({ startDate: start.value, endDate: start.value });
  const end = datePart(endValue);
  if (!end.ok) return problem(`endDate: ${end.reason}`);
  if (end.value === OPEN_END) return converted({ startDate: start.value, endDate: null });
  if (end.value < start.value) return problem(`endDate ${end.value} is before startDate ${start.value}`);
  return converted({ startDate: start.value, endDate: end.value });
}

const FREQUENCIES: Record<string, Exclude<Frequency, 'BIWEEKLY'>> = { D: 'DAILY', W: 'WEEKLY', M: 'MONTHLY', Y: 'YEARLY' };
/** The v3 interval limits (REPEAT-102 … REPEAT-105), the same as v1's. */
const MAX_INTERVAL: Record<Frequency, number> = { DAILY: 365, WEEKLY: 52, BIWEEKLY: 52, MONTHLY: 12, YEARLY: 5 };

/** Sunday-based weekday (0 = Sunday, as v1 and v3 recurring blocks count) of a date. */
const sundayBased = (date: string) => (weekdayIndex(date) + 1) % 7;

/** "135" → [1, 3, 5]; empty → the start date's weekday. */
function weekdaysOf(digits: unknown, startDate: string): Conversion<number[]> {
  const value = text(typeof digits === 'number' ? String(digits) : digits);
  if (value === null) return converted([sundayBased(startDate)]);
  if (!/^[0-6]+$/.test(value)) return problem(`weekdays ${show(digits)} are not digits 0 (Sunday) to 6 (Saturday)`);
  return converted([...new Set([...value].map(Number))].sort((a, b) => a - b));
}

interface Repetition {
  frequency: Exclude<Frequency, 'BIWEEKLY'>;
  interval: number;
  weekdays: number[];
  dayOfMonth: number | null;
}

/** MONTHLY: monthType D (or none) with monthDay 1-31; monthType M (nth weekday) has no v3 field. */
function dayOfMonthOf(repeat: V1Repeat): Conversion<number | null> {
  if (text(repeat.monthType)?.toUpperCase() === 'M') return problem('monthType M (a weekday of the nth week) has no v3 equivalent');
  const day = text(typeof repeat.monthDay === 'number' ? String(repeat.monthDay) : repeat.monthDay);
  if (day === null) return converted(null);
  const number = Number(day);
  return Number.isInteger(number) && number >= 1 && number <= 31 ? converted(number) : problem(`monthDay ${show(repeat.monthDay)} is not a day of the month (1-31)`);
}

/** A v1 repeat (§4) → the v3 rule's frequency, interval, weekdays and day of month. */
function repetitionOf(repeat: V1Repeat | null | undefined, startDate: string): Conversion<Repetition> {
  const code = text(repeat?.frequency)?.toUpperCase() ?? '';
  const frequency = FREQUENCIES[code];
  if (!repeat || !frequency) return problem(`repeat.frequency ${show(repeat?.frequency)} is not D, W, M or Y`);
  const interval = repeat.interval || 1;
  if (!Number.isInteger(interval) || interval < 1 || interval > MAX_INTERVAL[frequency]) {
    return problem(`repeat.interval ${show(repeat.interval)} is outside 1 to ${MAX_INTERVAL[frequency]} for ${frequency}`);
  }
  const weekdays = frequency === 'WEEKLY' ? weekdaysOf(repeat.weekdays, startDate) : converted<number[]>([]);
  const dayOfMonth = frequency === 'MONTHLY' ? dayOfMonthOf(repeat) : converted<number | null>(null);
  const parts = all({ 'repeat.weekdays': weekdays, repeat: dayOfMonth });
  if (!parts.ok) return parts;
  return converted({ frequency, interval, weekdays: parts.value['repeat.weekdays'], dayOfMonth: parts.value.repeat });
}

// --- Resource blocks → recurring blocks (rule 6) ----------------------------------------------

/** The v3 recurring block body (src/modules/unavailability/schemas.ts) without its scope. */
export interface RecurringBlockFields extends Repetition {
  legacyId: string;
  name: string;
  startDate: string;
  endDate: string | null;
  startTime: string;
  endTime: string;
  iana: string;
}

export interface RecurringBlockImport {
  fields: RecurringBlockFields;
  /** The scope: ResourceId of this v1 resource. */
  resourceLegacyId: string;
}

/**
 * §5.5: a repeating block keeps its rule; a non-repeating one is DAILY from its start date to its
 * end date (one day when they are equal), the same daily window each day (v1-source.md §7.8).
 * Times stay wall-clock times in `iana` (the resource's zone), so v3 expands them exactly across
 * daylight-saving changes. An end before the start runs overnight, as v3 reads it.
 */
export function resourceBlockToRecurringBlock(block: V1ResourceBlock, iana: string): Conversion<RecurringBlockImport> {
  const parts = all({
    id: v1Id(block.id),
    resourceId: v1Id(block.resourceId),
    dates: dateRange(block.startDate, block.endDate),
    times: militaryWindow(block.startTime, block.endTime),
  });
  if (!parts.ok) return parts;
  const { id, resourceId, dates, times } = parts.value;
  if (times.start === times.end) return problem(`startTime and endTime are both ${times.start}: an empty block`);
  const once: Repetition = { frequency: 'DAILY', interval: 1, weekdays: [], dayOfMonth: null };
  const rule = block.repeats === true ? repetitionOf(block.repeat, dates.startDate) : converted(once);
  if (!rule.ok) return rule;
  const fields: RecurringBlockFields = {
    legacyId: id,
    name: text(block.reason) ?? `v1 block ${id}`,
    ...rule.value,
    ...dates,
    startTime: times.start,
    endTime: times.end,
    iana,
  };
  return converted({ fields, resourceLegacyId: resourceId }, parts.warnings);
}

// --- Allocations (§5.4) -----------------------------------------------------------------------

/** The v3 allocation items (src/modules/unavailability/schemas.ts). */
export interface AllocationItemFields {
  start: string;
  end: string;
  bookingsPerSlot?: number;
  legacyId: string;
}
export type WeeklyAllocationFields = AllocationItemFields & { day: Weekday };
export type SingleAllocationFields = AllocationItemFields & { date: string };

export interface AllocationImport {
  /** The query scope of setWeeklyAllocations / setSingleAllocations, as v1 ids. */
  scope: { locationLegacyId: string; serviceLegacyId: string | null; resourceLegacyId: string | null };
  weekly: WeeklyAllocationFields[];
  single: SingleAllocationFields[];
}

/** A service allocation or a resource allocation (which names its location businessId). */
export type V1Allocation = V1ServiceAllocation | V1ResourceAllocation;

/** A non-repeating allocation longer than this is a data error, not a year of single dates. */
const MAX_SINGLE_DAYS = 366;

/** W every week → its weekdays; D every day → all seven; anything else has no weekly form. */
function weeklyDays(repeat: V1Repeat | null | undefined, startDate: string): Conversion<Weekday[]> {
  const frequency = text(repeat?.frequency)?.toUpperCase();
  const interval = repeat?.interval || 1;
  if (frequency === 'D' && interval === 1) return converted([...V1_DAYS]);
  if (frequency === 'W' && interval === 1) {
    const days = weekdaysOf(repeat?.weekdays, startDate);
    return days.ok ? converted(days.value.map((digit) => V1_DAYS[digit]!)) : days;
  }
  return problem(
    `repeat ${show(repeat?.frequency)} every ${show(repeat?.interval)}: v3 weekly allocations repeat every week, so only W or D with interval 1 migrate; enter this one as single dates in v3`,
  );
}

function allocationScope(allocation: V1Allocation): Conversion<AllocationImport['scope']> {
  const location = 'locationId' in allocation && allocation.locationId ? allocation.locationId : (allocation as V1ResourceAllocation).businessId;
  const parts = all({
    locationId: v1Id(location),
    serviceId: optionalId('serviceId' in allocation ? allocation.serviceId : null),
    resourceId: optionalId(allocation.resourceId),
  });
  if (!parts.ok) return parts;
  return converted({ locationLegacyId: parts.value.locationId, serviceLegacyId: parts.value.serviceId, resourceLegacyId: parts.value.resourceId });
}

/** Pair-scoped capacity: bookingLimit when above 0, else the service's maxCapacity (§5.4, inferred). */
function allocationCapacity(allocation: V1Allocation, scope: AllocationImport['scope'], serviceCapacity: number | null | undefined): number | undefined {
  if (scope.serviceLegacyId === null || scope.resourceLegacyId === null) return undefined;
  const limit = 'bookingLimit' in allocation ? allocation.bookingLimit : null;
  if (typeof limit === 'number' && Number.isInteger(limit) && limit > 0) return limit;
  return serviceCapacity && serviceCapacity > 0 ? serviceCapacity : undefined;
}

function weeklyAllocation(allocation: V1Allocation, item: AllocationItemFields, dates: { startDate: string; endDate: string | null }, today: string): Conversion<AllocationImport['weekly']> | Ignored {
  if (dates.endDate !== null && dates.endDate < today) return ignored(`a weekly allocation that ended on ${dates.endDate}`);
  const days = weeklyDays(allocation.repeat, dates.startDate);
  if (!days.ok) return days;
  const warnings: string[] = [];
  if (dates.endDate !== null) warnings.push(`ends on ${dates.endDate} in v1; v3 weekly allocations have no end date, so it repeats without end`);
  if (dates.startDate > today) warnings.push(`starts on ${dates.startDate} in v1; v3 weekly allocations have no start date, so it applies at once`);
  return converted(
    days.value.map((day) => ({ day, ...item })),
    warnings,
  );
}

function singleAllocations(item: AllocationItemFields, dates: { startDate: string; endDate: string | null }, today: string): Conversion<AllocationImport['single']> | Ignored {
  if (dates.endDate === null) return problem('a non-repeating allocation without an end date (9999-12-31) has no single-date form');
  const last = dates.endDate;
  if (last < today) return ignored(`a single allocation in the past (${last})`);
  const days = (Date.parse(last) - Date.parse(dates.startDate)) / 86_400_000 + 1;
  if (days > MAX_SINGLE_DAYS) return problem(`a non-repeating allocation over ${days} days (${dates.startDate} to ${last}); at most ${MAX_SINGLE_DAYS} become single dates`);
  const items: SingleAllocationFields[] = [];
  for (let date = dates.startDate > today ? dates.startDate : today; date <= last; date = addDays(date, 1)) items.push({ date, ...item });
  return converted(items);
}

/**
 * §5.4: a v1 service or resource allocation → v3 allocation items of one scope. Repeating W/D
 * every week → one weekly item per weekday; non-repeating → one single item per date from today
 * (in the location's zone) on; other repeats → a problem. Ended allocations are ignored.
 * `serviceCapacity` is the service's maxCapacity, the capacity when bookingLimit is 0.
 */
export function allocationItems(
  allocation: V1Allocation,
  options: { today: string; serviceCapacity?: number | null },
): Conversion<AllocationImport> | Ignored {
  const parts = all({
    id: v1Id(allocation.id),
    scope: allocationScope(allocation),
    dates: dateRange(allocation.startDate, allocation.endDate),
    times: militaryWindow(allocation.startTime, allocation.endTime),
  });
  if (!parts.ok) return parts;
  const { id, scope, dates, times } = parts.value;
  if (minutesOfDay(times.end) <= minutesOfDay(times.start)) return problem(`${times.start} to ${times.end}: a v3 allocation ends after it starts on the same day`);
  const capacity = allocationCapacity(allocation, scope, options.serviceCapacity);
  const item: AllocationItemFields = { start: times.start, end: times.end, legacyId: id, ...(capacity !== undefined ? { bookingsPerSlot: capacity } : {}) };
  if (allocation.repeats === true) {
    const weekly = weeklyAllocation(allocation, item, dates, options.today);
    return weekly.ok === true ? converted({ scope, weekly: weekly.value, single: [] }, weekly.warnings) : weekly;
  }
  const single = singleAllocations(item, dates, options.today);
  return single.ok === true ? converted({ scope, weekly: [], single: single.value }) : single;
}

// --- Customers --------------------------------------------------------------------------------

/** The v3 customer body (src/modules/customers/schemas.ts). */
export interface CustomerFields extends CustomFieldValues {
  legacyId: string;
  firstName: string;
  lastName: string | null;
  email: string;
  phone: string | null;
}

export interface CustomerImport {
  fields: CustomerFields;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** First and last name from firstname/lastname, else split from name at its first space. */
function namesOf(customer: V1Customer): Conversion<{ firstName: string; lastName: string | null }> {
  const first = text(customer.firstname);
  if (first !== null) return converted({ firstName: first, lastName: text(customer.lastname) });
  const name = text(customer.name);
  if (name === null) return problem('no firstname or name (a v3 customer needs a first name)');
  const [firstName, ...rest] = name.split(/\s+/);
  return converted({ firstName: firstName!, lastName: text(customer.lastname) ?? (rest.length ? rest.join(' ') : null) });
}

/** The first phone number v3 can store (7-15 characters); others are dropped with a warning. */
function phoneOf(numbers: Array<string | null | undefined>): Converted<string | null> {
  const given = numbers.map(text).filter((value): value is string => value !== null);
  const fits = given.find((value) => value.length >= 7 && value.length <= 15);
  const dropped = given.filter((value) => value !== fits);
  return converted(fits ?? null, dropped.length && !fits ? [`phone ${dropped.map(show).join(', ')} dropped: v3 phones have 7 to 15 characters`] : []);
}

/** Customers are matched by email within the company, so one without a usable email fails. */
export function customerFields(customer: V1Customer): Conversion<CustomerImport> | Ignored {
  if (customer.deletedStatus === true) return ignored('deleted in v1 (deletedStatus)');
  const email = text(customer.email);
  const parts = all({
    id: v1Id(customer.id),
    email: email !== null && EMAIL.test(email) ? converted(email) : problem(email === null ? 'missing (v3 customers are matched by email)' : `${show(email)} is not an email address`),
    names: namesOf(customer),
    phone: phoneOf([customer.contact?.mobilePhone, customer.contact?.businessPhone, customer.contact?.homePhone]),
  });
  if (!parts.ok) return parts;
  const p = parts.value;
  const fields: CustomerFields = { legacyId: p.id, ...p.names, email: p.email, phone: p.phone, ...customFields(customer.customFields) };
  return converted({ fields }, parts.warnings);
}

// --- Appointments -----------------------------------------------------------------------------

export type MigratedStatus = 'BK' | 'RS' | 'CN' | 'RE';

/** The v3 appointment as the importer writes it (src/modules/appointments/schemas.ts). */
export interface AppointmentFields extends CustomFieldValues {
  legacyId: string;
  status: MigratedStatus;
  /** UTC ISO 8601. */
  startTime: string;
  endTime: string;
  duration: number;
  /** The location's zone, as v3 appointments carry it. */
  timezoneName: string;
  confirmed: boolean;
  notes: string | null;
}

export interface AppointmentImport {
  fields: AppointmentFields;
  locationLegacyId: string;
  serviceLegacyId: string;
  resourceLegacyIds: string[];
  customerLegacyId: string | null;
  /** Who booked, when no v1 customer is linked (v3 finds or creates the customer by email). */
  contact: { name: string | null; email: string; phone: string | null } | null;
}

const STATUSES: Record<string, MigratedStatus> = { BK: 'BK', RS: 'RS', CN: 'CN', RE: 'RE' };

/** v1 and v3 share the codes (consumer document: IN, BK, CN, RE, RS); an IN hold does not migrate. */
function statusOf(value: unknown): Conversion<MigratedStatus> | Ignored {
  const code = text(value)?.toUpperCase() ?? '';
  if (code === 'IN') return ignored('a v1 hold (IN): v3 holds expire and the export carries no expiry');
  const status = STATUSES[code];
  return status ? converted(status) : problem(`status ${show(value)} is not IN, BK, RS, CN or RE`);
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{1,2}(?::?\d{2})?)?$/i;

/** "+5:30", "-0500", "+05" → "+05:30", "-05:00", "+05:00". */
function isoOffset(offset: string): string {
  const [, sign, hours, minutes] = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(offset)!;
  return `${sign}${hours!.padStart(2, '0')}:${minutes ?? '00'}`;
}

/**
 * A v1 date-time → an instant. With an offset the instant is exact (a warning notes an offset the
 * zone did not have then, as v1 may keep the offset of the booking day); without one it is wall
 * time in `zone`, through localToInstant (a skipped time moves forward, a repeated one is the first).
 */
export function instantOf(value: unknown, zone: string): Conversion<DateTime> {
  const match = DATE_TIME.exec(text(value) ?? '');
  if (!match) return problem(`${show(value)} is not an ISO 8601 date and time`);
  const [, date, hours, minutes, seconds = '00', offset] = match;
  if (offset === undefined) {
    const local = localToInstant(date!, `${hours}:${minutes}`, zone).plus({ seconds: Number(seconds) });
    return local.isValid ? converted(local.toUTC()) : problem(`${show(value)} is not a valid date and time`);
  }
  const iso = `${date}T${hours}:${minutes}:${seconds}${offset.toUpperCase() === 'Z' ? 'Z' : isoOffset(offset)}`;
  const instant = DateTime.fromISO(iso, { setZone: true });
  if (!instant.isValid) return problem(`${show(value)} is not a valid date and time`);
  const zoneOffset = instant.setZone(zone).offset;
  const warnings = offset.toUpperCase() !== 'Z' && zoneOffset !== instant.offset ? [`${show(value)} states offset ${instant.toFormat('ZZ')} where ${zone} was at ${instant.setZone(zone).toFormat('ZZ')}; the stated offset is used`] : [];
  return converted(instant.toUTC(), warnings);
}

/** The appointment's start and end; without endDateTime, the start plus duration minutes. */
function appointmentTimes(appointment: V1Appointment, zone: string): Conversion<{ start: DateTime; end: DateTime }> {
  const start = instantOf(appointment.startDateTime, zone);
  if (!start.ok) return problem(`startDateTime: ${start.reason}`);
  const hasEnd = text(appointment.endDateTime) !== null;
  if (!hasEnd && !(typeof appointment.duration === 'number' && appointment.duration > 0)) return problem('neither endDateTime nor a duration');
  const end = hasEnd ? instantOf(appointment.endDateTime, zone) : converted(start.value.plus({ minutes: appointment.duration! }));
  if (!end.ok) return problem(`endDateTime: ${end.reason}`);
  if (end.value <= start.value) return problem(`endDateTime ${end.value.toISO()} is not after startDateTime ${start.value.toISO()}`);
  return converted({ start: start.value, end: end.value }, [...start.warnings, ...end.warnings]);
}

/** resourceId and resources[] together, each once; customerId, else the first of customers[]. */
function appointmentLinks(appointment: V1Appointment): Conversion<{ resources: string[]; customer: string | null }> {
  const resources = new Set<string>();
  for (const value of [appointment.resourceId, ...(appointment.resources ?? []).map((r) => r.resourceId)]) {
    const id = optionalId(value);
    if (!id.ok) return problem(`resourceId: ${id.reason}`);
    if (id.value !== null) resources.add(id.value);
  }
  const customers = (appointment.customers ?? []).map((c) => c.customerId);
  const own = optionalId(appointment.customerId);
  const customer = own.ok && own.value === null ? optionalId(customers[0]) : own;
  if (!customer.ok) return problem(`customerId: ${customer.reason}`);
  const warnings = customers.length > 1 ? [`${customers.length} customers in v1; v3 links one (${customer.value})`] : [];
  return converted({ resources: [...resources], customer: customer.value }, warnings);
}

/**
 * An appointment from today on (its start's date in the location's zone, at `now`) with its status,
 * so its time stays taken in v3. Earlier ones and v1 holds are ignored. Times without an offset are
 * wall time in the appointment's own zone, else the location's (`locationZone`).
 */
export function appointmentFields(appointment: V1Appointment, options: { now: Date | number; locationZone: string }): Conversion<AppointmentImport> | Ignored {
  const status = statusOf(appointment.status);
  if (status.ok !== true) return status;
  const parts = all({
    id: v1Id(appointment.id),
    locationId: v1Id(appointment.locationId),
    serviceId: v1Id(appointment.serviceId),
    timezone: timezone(appointment, options.locationZone),
    links: appointmentLinks(appointment),
  });
  if (!parts.ok) return parts;
  const times = appointmentTimes(appointment, parts.value.timezone);
  if (!times.ok) return times;
  const { start, end } = times.value;
  const startDay = localDate(start, options.locationZone);
  const today = localDate(DateTime.fromMillis(Number(options.now)), options.locationZone);
  if (startDay < today) return ignored(`starts on ${startDay}, before today (${today}): only appointments from today on migrate`);
  const minutes = end.diff(start, 'minutes').minutes;
  if (!Number.isInteger(minutes)) return problem(`lasts ${minutes} minutes; v3 durations are whole minutes`);
  return converted(appointmentImport(appointment, parts.value, status.value, { start, end, minutes, zone: options.locationZone }), [...parts.warnings, ...times.warnings]);
}

function appointmentImport(
  appointment: V1Appointment,
  ids: { id: string; locationId: string; serviceId: string; links: { resources: string[]; customer: string | null } },
  status: MigratedStatus,
  time: { start: DateTime; end: DateTime; minutes: number; zone: string },
): AppointmentImport {
  const email = text(appointment.email);
  const fields: AppointmentFields = {
    legacyId: ids.id,
    status,
    startTime: time.start.toUTC().toISO({ suppressMilliseconds: true })!,
    endTime: time.end.toUTC().toISO({ suppressMilliseconds: true })!,
    duration: time.minutes,
    timezoneName: time.zone,
    confirmed: appointment.confirmed === true,
    notes: text(appointment.notes),
    ...customFields(appointment.customFields),
  };
  const contact = ids.links.customer === null && email !== null ? { name: text(appointment.name), email, phone: text(appointment.phone) } : null;
  return { fields, locationLegacyId: ids.locationId, serviceLegacyId: ids.serviceId, resourceLegacyIds: ids.links.resources, customerLegacyId: ids.links.customer, contact };
}
