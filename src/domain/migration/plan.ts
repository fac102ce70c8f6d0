import { DateTime } from 'luxon';
import { localDate } from '../local-time.js';
import {
  allocationItems,
  appointmentFields,
  customerFields,
  locationFields,
  resourceBlockToRecurringBlock,
  resourceFields,
  serviceFields,
  serviceLocationLegacyIds,
  v1Id,
} from './convert.js';
import type {
  AppointmentImport,
  CustomerImport,
  LocationImport,
  RecurringBlockImport,
  ResourceFields,
  ServiceImport,
  SingleAllocationFields,
  V1Allocation,
  WeeklyAllocationFields,
} from './convert.js';
import type { V1Appointment, V1Customer, V1Export, V1Location, V1Resource, V1Service } from './v1.js';

/**
 * The importer's plan: a whole v1 export converted record by record (convert.ts) and its
 * references resolved within the document, in the order the importer writes it. Pure: the same
 * document and `now` give the same plan, so a dry run, a run and a resumed run agree. What v3
 * cannot take is in `failed` with its kind, v1 id and a readable reason; the rest goes on.
 */

/** The report's kinds (decisions.md "Migration"), in the order they are written. */
export const MIGRATION_KINDS = ['locations', 'services', 'resources', 'weeklyAllocations', 'singleAllocations', 'recurringBlocks', 'customers', 'appointments'] as const;
export type MigrationKind = (typeof MIGRATION_KINDS)[number];
export type KindCounts = Record<MigrationKind, number>;

/** One record that did not migrate (or, in `warnings`, migrated with something dropped). */
export interface RecordNote {
  kind: MigrationKind;
  /** The v1 id; null when the record has none that can be read. */
  legacyId: string | null;
  message: string;
}

export interface PlannedService extends ServiceImport {
  /** Every v1 location that offers it (its own, and those whose services list names it or is empty). */
  locationLegacyIds: string[];
}

export interface PlannedResource {
  fields: ResourceFields;
  locationLegacyIds: string[];
  /** Resolved: v1 "none listed" is every service offered at its locations. */
  serviceLegacyIds: string[];
}

/** The allocations of one scope (location, service or none, resource or none): one transaction. */
export interface PlannedAllocationSet {
  scope: { locationLegacyId: string; serviceLegacyId: string | null; resourceLegacyId: string | null };
  weekly: WeeklyAllocationFields[];
  single: SingleAllocationFields[];
}

export interface MigrationPlan {
  locations: LocationImport[];
  services: PlannedService[];
  resources: PlannedResource[];
  allocationSets: PlannedAllocationSet[];
  recurringBlocks: RecurringBlockImport[];
  customers: CustomerImport[];
  appointments: AppointmentImport[];
  failed: RecordNote[];
  warnings: RecordNote[];
  /** Records deliberately left behind (deleted in v1, ended, in the past, holds), by kind. */
  ignored: KindCounts;
}

export const zeroCounts = (): KindCounts => Object.fromEntries(MIGRATION_KINDS.map((kind) => [kind, 0])) as KindCounts;

/** The v1 id of a raw record for a report line, even when it is not a valid id. */
function reportedId(record: unknown): string | null {
  const raw = (record as { id?: unknown } | null)?.id;
  const id = v1Id(raw);
  if (id.ok) return id.value;
  if (raw === undefined || raw === null || raw === '') return null;
  // Any JSON may stand where an id should: an object without a usable toString must not throw.
  if (typeof raw === 'object') {
    try {
      return JSON.stringify(raw) ?? null;
    } catch {
      return null;
    }
  }
  return String(raw);
}

const list = <T>(value: T[] | null | undefined): T[] => (Array.isArray(value) ? value : []);

/** Everything one planning pass collects besides the converted records. */
class Notes {
  failed: RecordNote[] = [];
  warnings: RecordNote[] = [];
  ignored = zeroCounts();
  fail(kind: MigrationKind, legacyId: string | null, message: string) {
    this.failed.push({ kind, legacyId, message });
  }
  warn(kind: MigrationKind, legacyId: string | null, messages: string[]) {
    for (const message of messages) this.warnings.push({ kind, legacyId, message });
  }
}

/**
 * A conversion that met a field of a shape v1 never sends (a list of nulls, a number for an object)
 * fails that record with the reason instead of ending the whole plan.
 */
function guarded<T>(convert: () => T): T | { ok: false; reason: string } {
  try {
    return convert();
  } catch (error) {
    return { ok: false, reason: `a field has a shape v1 does not send (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * Converts each record of `records`; a failed conversion or a second record with the same v1 id
 * is noted, an ignored one counted. Answers the converted values in document order.
 */
function convertAll<R, T>(
  kind: MigrationKind,
  records: R[],
  notes: Notes,
  convert: (record: R) => { ok: true; value: T; warnings: string[] } | { ok: false; reason: string } | { ok: 'ignored'; reason: string },
  idOf: (value: T) => string,
  seen = new Set<string>(),
): T[] {
  const values: T[] = [];
  for (const record of records) {
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      notes.fail(kind, null, `a ${record === null ? 'null' : typeof record} where a v1 record (an object) was expected`);
      continue;
    }
    const result = guarded(() => convert(record));
    if (result.ok === 'ignored') {
      notes.ignored[kind] += 1;
      continue;
    }
    if (result.ok === false) {
      notes.fail(kind, reportedId(record), result.reason);
      continue;
    }
    const id = idOf(result.value);
    if (seen.has(id)) {
      notes.fail(kind, id, 'appears more than once in the document; the first record with this id is used');
      continue;
    }
    seen.add(id);
    notes.warn(kind, id, result.warnings);
    values.push(result.value);
  }
  return values;
}

/** The primary location (v1 lists default to it), else the first one. */
function primaryLocationId(raw: V1Location[], locations: LocationImport[]): string | null {
  const primary = raw.find((l) => (l as { primaryBusiness?: unknown } | null)?.primaryBusiness === true);
  const id = primary ? v1Id(primary.id) : null;
  if (id?.ok && locations.some((l) => l.fields.legacyId === id.value)) return id.value;
  return locations[0]?.fields.legacyId ?? null;
}

export function planMigration(document: V1Export, options: { now: Date | number }): MigrationPlan {
  const notes = new Notes();
  const now = Number(options.now);

  // Locations first: every zone below falls back to its location's.
  const rawLocations = list(document.locations);
  const locations = convertAll('locations', rawLocations, notes, locationFields, (l) => l.fields.legacyId);
  const locationById = new Map(locations.map((l) => [l.fields.legacyId, l]));
  const primary = primaryLocationId(rawLocations, locations);
  const zoneOf = (locationLegacyId: string | null | undefined) => (locationLegacyId ? locationById.get(locationLegacyId)?.fields.timezoneName : undefined);

  // Services, with the locations that offer them (v1-source.md §5, end).
  const rawServices = list(document.services);
  const converted = convertAll('services', rawServices, notes, serviceFields, (s) => s.fields.legacyId);
  const services: PlannedService[] = [];
  for (const service of converted) {
    const offeredAt = serviceLocationLegacyIds(service, locations).filter((id) => locationById.has(id));
    if (!offeredAt.length) {
      notes.fail('services', service.fields.legacyId, `no location of the document offers it (its location ${service.locationLegacyId ?? '(none)'} is not migrated)`);
      continue;
    }
    services.push({ ...service, locationLegacyIds: offeredAt });
  }
  const serviceById = new Map(services.map((s) => [s.fields.legacyId, s]));
  const capacityOf = new Map<string, number>();
  for (const raw of rawServices) {
    const id = v1Id((raw as V1Service | null)?.id);
    const capacity = (raw as V1Service | null)?.maxCapacity;
    if (id.ok && typeof capacity === 'number') capacityOf.set(id.value, capacity);
  }

  // Resources: in their home location's zone when they name none; "no services" is every service there.
  const resources: PlannedResource[] = [];
  const resourceZone = new Map<string, string>();
  const rawResources = list(document.resources);
  const convertedResources = convertAll(
    'resources',
    rawResources,
    notes,
    (resource: V1Resource) => {
      const home = v1Id(resource.locationId);
      const locationId = home.ok ? home.value : primary;
      const zone = zoneOf(locationId);
      if (!zone) return { ok: false as const, reason: `its location ${home.ok ? home.value : '(none)'} is not migrated` };
      const result = resourceFields(resource, zone);
      if (result.ok === true && !result.value.locationLegacyIds.length && locationId) result.value.locationLegacyIds = [locationId];
      return result;
    },
    (r) => r.fields.legacyId,
  );
  for (const resource of convertedResources) {
    const locationIds = resource.locationLegacyIds.filter((id) => locationById.has(id));
    const offered = services.filter((s) => s.locationLegacyIds.some((id) => locationIds.includes(id))).map((s) => s.fields.legacyId);
    let serviceIds: string[];
    if (resource.serviceLegacyIds === 'all') serviceIds = offered;
    else {
      serviceIds = resource.serviceLegacyIds.filter((id) => serviceById.has(id));
      const missing = resource.serviceLegacyIds.filter((id) => !serviceById.has(id));
      if (missing.length) notes.warn('resources', resource.fields.legacyId, [`services ${missing.join(', ')} are not migrated, so the resource does not offer them`]);
    }
    resources.push({ fields: resource.fields, locationLegacyIds: locationIds, serviceLegacyIds: serviceIds });
    resourceZone.set(resource.fields.legacyId, resource.fields.timezoneName);
  }

  const allocationSets = planAllocations(document, { notes, now, zoneOf, primary, capacityOf });

  // Resource blocks (rule 6): recurring blocks in their resource's zone.
  const recurringBlocks = convertAll(
    'recurringBlocks',
    list(document.resourceBlocks),
    notes,
    (block) => {
      const resource = v1Id(block.resourceId);
      const zone = resource.ok ? resourceZone.get(resource.value) : undefined;
      if (!zone) return { ok: false as const, reason: `its resource ${resource.ok ? resource.value : '(none)'} is not migrated` };
      return resourceBlockToRecurringBlock(block, zone);
    },
    (b) => b.fields.legacyId,
  );

  const customers = convertCustomers(list(document.customers), notes, new Set());
  const appointments = convertAppointments(list(document.appointments), notes, new Set(), { now, zoneOf });

  return { locations, services, resources, allocationSets, recurringBlocks, customers, appointments, failed: notes.failed, warnings: notes.warnings, ignored: notes.ignored };
}

function convertCustomers(records: V1Customer[], notes: Notes, seen: Set<string>) {
  return convertAll('customers', records, notes, customerFields, (c) => c.fields.legacyId, seen);
}

function convertAppointments(records: V1Appointment[], notes: Notes, seen: Set<string>, context: { now: number; zoneOf: (id: string) => string | undefined }) {
  return convertAll(
    'appointments',
    records,
    notes,
    (appointment) => {
      const location = v1Id(appointment.locationId);
      const zone = location.ok ? context.zoneOf(location.value) : undefined;
      if (!zone) return { ok: false as const, reason: `its location ${location.ok ? location.value : '(none)'} is not migrated` };
      return appointmentFields(appointment, { now: context.now, locationZone: zone });
    },
    (a) => a.fields.legacyId,
    seen,
  );
}

/**
 * planMigration, giving way to `pause` between steps of `step` customers or appointments (the
 * lists that run to tens of thousands), so a server planning a large import still answers other
 * requests. The plan is the same as planMigration's.
 */
export async function planMigrationInSteps(document: V1Export, options: { now: Date | number; pause: () => Promise<void>; step?: number }): Promise<MigrationPlan> {
  const step = options.step ?? 2000;
  const now = Number(options.now);
  const plan = planMigration({ ...document, customers: [], appointments: [] }, { now });
  const notes = new Notes();
  notes.failed = plan.failed;
  notes.warnings = plan.warnings;
  notes.ignored = plan.ignored;
  const zones = new Map(plan.locations.map((l) => [l.fields.legacyId, l.fields.timezoneName]));
  const zoneOf = (id: string) => zones.get(id);
  const chunks = async <T>(records: unknown[], convert: (chunk: never[], seen: Set<string>) => T[]): Promise<T[]> => {
    const seen = new Set<string>();
    const values: T[] = [];
    for (let i = 0; i < records.length; i += step) {
      await options.pause();
      values.push(...convert(records.slice(i, i + step) as never[], seen));
    }
    return values;
  };
  plan.customers = await chunks(list(document.customers), (chunk, seen) => convertCustomers(chunk, notes, seen));
  plan.appointments = await chunks(list(document.appointments), (chunk, seen) => convertAppointments(chunk, notes, seen, { now, zoneOf }));
  return plan;
}

/**
 * Service and resource allocations grouped by scope (§5.4): v3 writes a scope's set at once. A v1
 * allocation that fails is left out of its set whole (all its weekdays or dates), and so is one
 * that overlaps an earlier window of its set on the same day (v3 sets do not overlap).
 */
function planAllocations(
  document: V1Export,
  context: { notes: Notes; now: number; zoneOf: (id: string | null | undefined) => string | undefined; primary: string | null; capacityOf: Map<string, number> },
): PlannedAllocationSet[] {
  const { notes } = context;
  const sets = new Map<string, PlannedAllocationSet>();
  /** Per scope, per day key (weekday or date): the windows taken so far, in document order. */
  const windows = new Map<string, Map<string, Array<{ start: number; end: number; legacyId: string }>>>();
  const seen = new Set<string>();
  /** Today in each zone (one Luxon conversion per zone, not per allocation). */
  const todayIn = new Map<string, string>();
  const all: V1Allocation[] = [...list(document.serviceAllocations), ...list(document.resourceAllocations)];
  for (const allocation of all) {
    if (typeof allocation !== 'object' || allocation === null || Array.isArray(allocation)) {
      notes.fail('weeklyAllocations', null, 'a value where a v1 allocation (an object) was expected');
      continue;
    }
    const kind: MigrationKind = allocation.repeats === true ? 'weeklyAllocations' : 'singleAllocations';
    const locationRaw = 'locationId' in allocation && allocation.locationId ? allocation.locationId : 'businessId' in allocation ? allocation.businessId : null;
    const location = v1Id(locationRaw);
    const zone = context.zoneOf(location.ok ? location.value : context.primary);
    if (!zone) {
      notes.fail(kind, reportedId(allocation), `its location ${location.ok ? location.value : '(none)'} is not migrated`);
      continue;
    }
    let today = todayIn.get(zone);
    if (today === undefined) todayIn.set(zone, (today = localDate(DateTime.fromMillis(context.now), zone)));
    const serviceId = 'serviceId' in allocation ? v1Id(allocation.serviceId) : null;
    const result = guarded(() => allocationItems(allocation, { today, serviceCapacity: serviceId?.ok ? context.capacityOf.get(serviceId.value) : null }));
    if (result.ok === 'ignored') {
      notes.ignored[kind] += 1;
      continue;
    }
    if (result.ok === false) {
      notes.fail(kind, reportedId(allocation), result.reason);
      continue;
    }
    const { scope, weekly, single } = result.value;
    const legacyId = (weekly[0] ?? single[0])?.legacyId ?? reportedId(allocation) ?? '';
    // Service and resource allocations are separate v1 lists that may reuse a number.
    const identity = `${'serviceId' in allocation ? 'service' : 'resource'}:${legacyId}`;
    if (seen.has(identity)) {
      notes.fail(kind, legacyId, 'appears more than once in the document; the first record with this id is used');
      continue;
    }
    seen.add(identity);
    const key = JSON.stringify([scope.locationLegacyId, scope.serviceLegacyId, scope.resourceLegacyId]);
    const taken = windows.get(key) ?? new Map<string, Array<{ start: number; end: number; legacyId: string }>>();
    const items: Array<{ dayKey: string; start: number; end: number }> = [
      ...weekly.map((w) => ({ dayKey: w.day, start: minutes(w.start), end: minutes(w.end) })),
      ...single.map((s) => ({ dayKey: s.date, start: minutes(s.start), end: minutes(s.end) })),
    ];
    // Only the windows of the same day can overlap: looked up by day, a scope with thousands of
    // allocations is not compared pairwise.
    let clash: { legacyId: string } | undefined;
    for (const item of items) {
      clash = taken.get(item.dayKey)?.find((t) => t.legacyId !== legacyId && t.start < item.end && item.start < t.end);
      if (clash) break;
    }
    if (clash) {
      notes.fail(kind, legacyId, `overlaps allocation ${clash.legacyId} of the same scope on the same day; v3 allocation windows of one scope do not overlap`);
      continue;
    }
    for (const item of items) {
      const day = taken.get(item.dayKey) ?? [];
      day.push({ start: item.start, end: item.end, legacyId });
      taken.set(item.dayKey, day);
    }
    windows.set(key, taken);
    notes.warn(kind, legacyId, result.warnings);
    const set = sets.get(key) ?? { scope, weekly: [], single: [] };
    set.weekly.push(...weekly);
    set.single.push(...single);
    sets.set(key, set);
  }
  return [...sets.values()];
}

const minutes = (time: string) => {
  const [hours, mins] = time.split(':').map(Number);
  return hours! * 60 + mins!;
};
