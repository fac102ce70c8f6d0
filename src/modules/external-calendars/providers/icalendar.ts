/**
 * iCalendar (RFC 5545) for the CalDAV provider (caldav.ts), with ical.js: the busy occurrences of
 * one calendar object inside a sync window, and the object we write for an appointment.
 *
 * Time zones: a TZID defined by a VTIMEZONE in the object uses that definition (ical.js). A TZID
 * with no VTIMEZONE that is an IANA name is resolved with Luxon through domain/local-time.ts (the
 * project's rule for skipped and repeated wall-clock times); any other TZID, floating times and
 * all-day dates are placed in the fallback zone (the calendar's calendar-timezone, else the
 * window's zone).
 */
import ICAL from 'ical.js';
import { IANAZone } from 'luxon';
import { localToMillis } from '../../../domain/local-time.js';
import type { BusyEvent, EventWrite } from './types.js';

type IcalComponent = InstanceType<typeof ICAL.Component>;
type IcalTime = InstanceType<typeof ICAL.Time>;
type IcalTimezone = InstanceType<typeof ICAL.Timezone>;
type IcalEvent = InstanceType<typeof ICAL.Event>;

/** Our own events: the UID we write starts with this, and they carry APPOINTMENT_PROPERTY. */
export const OWN_UID_PREFIX = 'slotwise-';
export const APPOINTMENT_PROPERTY = 'x-slotwise-appointment-id';

/** Where wall-clock times with no zone of their own are placed: an IANA zone or a VTIMEZONE. */
export type WallZone = { iana: string } | { vtimezone: IcalTimezone };

/** A series is walked from its first occurrence; one that needs more steps to pass the window is cut there. */
const MAX_OCCURRENCE_STEPS = 100_000;

function pad(value: number, width = 2): string {
  return String(value).padStart(width, '0');
}

function wallToMillis(zone: WallZone, year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  if ('iana' in zone) {
    return localToMillis(`${pad(year, 4)}-${pad(month)}-${pad(day)}`, `${pad(hour)}:${pad(minute)}`, zone.iana) + second * 1000;
  }
  return ICAL.Time.fromData({ year, month, day, hour, minute, second, isDate: false }, zone.vtimezone).toUnixTime() * 1000;
}

export function isIanaZone(name: string): boolean {
  return IANAZone.isValidZone(name);
}

/**
 * An IANA zone for ical.js, answered by Luxon: registered by name in ical.js's TimezoneService
 * for TZIDs that have no VTIMEZONE, so recurrence, EXDATE and RECURRENCE-ID matching happen in
 * the right zone. The definition depends only on the name, so sharing the registry is safe.
 */
class IanaTimezone extends ICAL.Timezone {
  constructor(readonly iana: string) {
    super({ tzid: iana });
  }

  override utcOffset(tt: IcalTime): number {
    const wall = Date.UTC(tt.year, tt.month - 1, tt.day, tt.hour, tt.minute, tt.second);
    return (wall - wallToMillis({ iana: this.iana }, tt.year, tt.month, tt.day, tt.hour, tt.minute, tt.second)) / 1000;
  }
}

function registerIanaZones(root: IcalComponent): void {
  const defined = new Set(root.getAllSubcomponents('vtimezone').map((zone) => String(zone.getFirstPropertyValue('tzid'))));
  for (const component of root.getAllSubcomponents()) {
    for (const property of component.getAllProperties()) {
      const tzid = property.getParameter('tzid');
      // get(), not has(): has() answers false for UTC until the service has set up its built-in zones.
      if (typeof tzid !== 'string' || defined.has(tzid) || ICAL.TimezoneService.get(tzid) || !isIanaZone(tzid)) continue;
      ICAL.TimezoneService.register(new IanaTimezone(tzid), tzid);
    }
  }
}

/** The zone a calendar-timezone property (a VCALENDAR with one VTIMEZONE) names, or null. */
export function calendarTimezone(text: string | null): WallZone | null {
  if (!text || !text.includes('BEGIN:VTIMEZONE')) return null;
  try {
    const zone = new ICAL.Component(ICAL.parse(text) as unknown[]).getFirstSubcomponent('vtimezone');
    if (!zone) return null;
    const tzid = String(zone.getFirstPropertyValue('tzid') ?? '');
    if (isIanaZone(tzid)) return { iana: tzid };
    // A VTIMEZONE with no rules would put every time at UTC: not a zone worth trusting.
    return zone.getFirstSubcomponent('standard') || zone.getFirstSubcomponent('daylight') ? { vtimezone: new ICAL.Timezone(zone) } : null;
  } catch {
    return null;
  }
}

export interface OccurrenceOptions {
  /** The window in epoch milliseconds; occurrences overlapping it are returned. */
  from: number;
  to: number;
  /** For all-day dates, floating times and TZIDs that cannot be resolved. */
  fallbackZone: WallZone;
  /** The user's calendar address (lower case, without mailto:) for declined invitations; null when unknown. */
  userAddress: string | null;
}

function timeToMillis(time: IcalTime, fallback: WallZone): number {
  if (time.isDate) return wallToMillis(fallback, time.year, time.month, time.day, 0, 0, 0);
  if (time.zone === ICAL.Timezone.localTimezone || !time.zone) {
    return wallToMillis(fallback, time.year, time.month, time.day, time.hour, time.minute, time.second);
  }
  return time.toUnixTime() * 1000;
}

/** The recurrence id in a key: a date for all-day series, else the UTC instant. */
function recurrenceKey(time: IcalTime, fallback: WallZone): string {
  if (time.isDate) return time.toString();
  return new Date(timeToMillis(time, fallback)).toISOString().replace('.000Z', 'Z');
}

function textValue(component: IcalComponent, name: string): string | null {
  const value = component.getFirstPropertyValue(name);
  return typeof value === 'string' ? value : null;
}

/** Whether one occurrence (its own component: the override, else the master) is busy time. */
function isBusy(component: IcalComponent, userAddress: string | null): boolean {
  if (textValue(component, 'transp')?.toUpperCase() === 'TRANSPARENT') return false;
  if (textValue(component, 'status')?.toUpperCase() === 'CANCELLED') return false;
  if (userAddress) {
    for (const attendee of component.getAllProperties('attendee')) {
      const address = String(attendee.getFirstValue() ?? '').toLowerCase().replace(/^mailto:/, '');
      const partstat = attendee.getParameter('partstat');
      if (address === userAddress && typeof partstat === 'string' && partstat.toUpperCase() === 'DECLINED') return false;
    }
  }
  return true;
}

/**
 * The appointment id of an object Slotwise wrote (by any company), or null: its
 * X-SLOTWISE-APPOINTMENT-ID, else what its UID names after `slotwise-`.
 */
function markerOf(uid: string, components: IcalComponent[]): string | null {
  for (const component of components) {
    const value = component.getFirstPropertyValue(APPOINTMENT_PROPERTY);
    if (value !== null && value !== undefined && String(value).trim() !== '') return String(value).trim();
  }
  return uid.startsWith(OWN_UID_PREFIX) && uid.length > OWN_UID_PREFIX.length ? uid.slice(OWN_UID_PREFIX.length) : null;
}

/**
 * The busy occurrences of one calendar object (its text) that overlap the window. A recurring
 * event is expanded here (RRULE, RDATE, EXDATE, RECURRENCE-ID overrides); each occurrence's key
 * is the UID and its recurrence id, a single event's key is its UID. Free, cancelled and declined
 * events are left out; events Slotwise wrote are kept, with their `marker` (the core decides
 * whose they are). An object ical.js cannot read throws.
 */
export function busyOccurrences(ics: string, options: OccurrenceOptions): BusyEvent[] {
  const parsed = ICAL.parse(ics) as unknown[];
  // Several VCALENDARs in one text parse to a list of them.
  const roots = (Array.isArray(parsed[0]) ? parsed : [parsed]).map((jcal) => new ICAL.Component(jcal as unknown[]));
  const found: BusyEvent[] = [];
  for (const root of roots) {
    registerIanaZones(root);
    const byUid = new Map<string, IcalComponent[]>();
    for (const vevent of root.getAllSubcomponents('vevent')) {
      const uid = textValue(vevent, 'uid') ?? '';
      byUid.set(uid, [...(byUid.get(uid) ?? []), vevent]);
    }
    for (const [uid, components] of byUid) {
      const marker = markerOf(uid, components);
      for (const event of occurrencesOf(uid, components, options)) found.push(marker ? { ...event, marker } : event);
    }
  }
  return found;
}

/** The busy occurrences of the components sharing one UID. */
function occurrencesOf(uid: string, components: IcalComponent[], options: OccurrenceOptions): BusyEvent[] {
  const found: BusyEvent[] = [];
  const master = components.find((c) => !c.hasProperty('recurrence-id'));
  const overrides = components.filter((c) => c.hasProperty('recurrence-id'));
  if (!master) {
    // Invited to single occurrences only: each is an event of its own.
    for (const override of overrides) {
      const event = new ICAL.Event(override);
      pushIfBusy(found, `${uid}#${recurrenceKey(event.recurrenceId, options.fallbackZone)}`, event, event.startDate, event.endDate, options);
    }
    return found;
  }
  const event = new ICAL.Event(master, { exceptions: overrides });
  if (!event.isRecurring()) pushIfBusy(found, uid, event, event.startDate, event.endDate, options);
  else expandSeries(found, uid, event, overrides, options);
  return found;
}

function pushIfBusy(found: BusyEvent[], key: string, item: IcalEvent, start: IcalTime, end: IcalTime, options: OccurrenceOptions): void {
  if (!isBusy(item.component, options.userAddress)) return;
  const startMs = timeToMillis(start, options.fallbackZone);
  const endMs = timeToMillis(end, options.fallbackZone);
  // A zero-length event holds no time; the window is half-open.
  if (!(endMs > startMs) || startMs >= options.to || endMs <= options.from) return;
  found.push({
    key,
    start: new Date(startMs),
    end: new Date(endMs),
    transparency: textValue(item.component, 'transp')?.toUpperCase() ?? 'OPAQUE',
    eventType: null,
  });
}

function expandSeries(found: BusyEvent[], uid: string, event: IcalEvent, overrides: IcalComponent[], options: OccurrenceOptions): void {
  const zone = options.fallbackZone;
  const visited = new Set<string>();
  const iterator = event.iterator();
  let passedWindow = false;
  for (let step = 0; step < MAX_OCCURRENCE_STEPS; step++) {
    const occurrence = iterator.next();
    if (!occurrence) break;
    // Occurrences come in order of their original start: past the window's end, only an override
    // moved back into the window could still matter (handled below).
    if (timeToMillis(occurrence, zone) >= options.to) {
      passedWindow = true;
      break;
    }
    const details = event.getOccurrenceDetails(occurrence);
    visited.add(recurrenceKey(occurrence, zone));
    pushIfBusy(found, `${uid}#${recurrenceKey(occurrence, zone)}`, details.item, details.startDate, details.endDate, options);
  }
  if (!passedWindow) return;
  for (const override of overrides) {
    const item = new ICAL.Event(override);
    const key = recurrenceKey(item.recurrenceId, zone);
    if (visited.has(key) || timeToMillis(item.recurrenceId, zone) < options.to) continue;
    pushIfBusy(found, `${uid}#${key}`, item, item.startDate, item.endDate, options);
  }
}

/** The UID of the event we write for an appointment. */
export function ownUid(appointmentId: string): string {
  return `${OWN_UID_PREFIX}${appointmentId}`;
}

/** The iCalendar object of an appointment: times in UTC, our UID and appointment property. */
export function appointmentObject(write: EventWrite, now: Date = new Date()): string {
  const calendar = new ICAL.Component('vcalendar');
  calendar.updatePropertyWithValue('prodid', '-//Slotwise//External calendar//EN');
  calendar.updatePropertyWithValue('version', '2.0');
  const event = new ICAL.Component('vevent');
  event.updatePropertyWithValue('uid', ownUid(write.appointmentId));
  event.updatePropertyWithValue('dtstamp', ICAL.Time.fromJSDate(now, true));
  event.updatePropertyWithValue('dtstart', ICAL.Time.fromJSDate(write.start, true));
  event.updatePropertyWithValue('dtend', ICAL.Time.fromJSDate(write.end, true));
  event.updatePropertyWithValue('summary', write.title);
  if (write.description) event.updatePropertyWithValue('description', write.description);
  event.updatePropertyWithValue('transp', 'OPAQUE');
  event.updatePropertyWithValue(APPOINTMENT_PROPERTY, write.appointmentId);
  calendar.addSubcomponent(event);
  return `${calendar.toString()}\r\n`;
}
