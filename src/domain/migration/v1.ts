/**
 * The OnSched v1 records the migration reads, as the v1 setup and consumer OpenAPI documents name
 * them (shared/spec/v1-source.md). Loose where v1 is loose: ids are strings in some views and
 * int32 in others, `type` is a string that may arrive as a number, and any field may be missing
 * or null in an export written by hand. Only the fields the importer reads are typed; the rest
 * pass through unread.
 */

/** A v1 id: string in most views, int32 in resource blocks and allocations (v1-source.md §4). */
export type V1Id = string | number;

/** Military HHMM: 900 = 09:00, 2400 = midnight at the end of the day. */
export type V1Hhmm = number;

export interface V1DayHours {
  startTime?: V1Hhmm | null;
  endTime?: V1Hhmm | null;
  /** Location businessHours only: false means closed whatever the times say. */
  isOpen?: boolean | null;
  /** Location businessHours only: open all day (0 to 2400). */
  is24Hours?: boolean | null;
}

export const V1_DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type V1Day = (typeof V1_DAYS)[number];
export type V1WeeklyHours = Partial<Record<V1Day, V1DayHours | null>>;

/** Either zone field may be empty; timezoneOffset is never read (its unit is not stated). */
export interface V1Zone {
  timezoneIana?: string | null;
  timezoneId?: string | null;
  timezoneOffset?: number | null;
}

export interface V1Repeat {
  frequency?: string | null;
  interval?: number | null;
  /** Digits, one per weekday, 0 = Sunday … 6 = Saturday: "24" = Tuesday and Thursday. */
  weekdays?: string | null;
  monthDay?: string | number | null;
  /** "D" same day of month, "M" weekday and week of month. */
  monthType?: string | null;
}

export interface V1Address {
  addressLine1?: string | null;
  addressLine2?: string | null;
  city?: string | null;
  state?: string | null;
  postalCode?: string | null;
  country?: string | null;
}

export interface V1Location extends V1Zone {
  id?: V1Id | null;
  name?: string | null;
  phone?: string | null;
  email?: string | null;
  address?: V1Address | null;
  businessHours?: V1WeeklyHours | null;
  settings?: { bookingTimerMins?: number | null } | null;
  /** Location services; an empty list offers every service. */
  services?: Array<{ id?: V1Id | null; serviceId?: V1Id | null }> | null;
}

/** field1 … field10: not in the v1 service view, copied when an export carries them. */
export type V1CustomFieldValues = Partial<Record<`field${number}`, unknown>>;

export interface V1Service extends V1CustomFieldValues {
  id?: V1Id | null;
  locationId?: V1Id | null;
  type?: string | number | null;
  name?: string | null;
  description?: string | null;
  duration?: number | null;
  durationSelect?: boolean | null;
  durationMin?: number | null;
  durationMax?: number | null;
  durationInterval?: number | null;
  availability?: V1WeeklyHours | null;
  bookAheadUnit?: number | null;
  bookAheadValue?: number | null;
  bookInAdvance?: number | null;
  bookingInterval?: number | null;
  padding?: number | null;
  maxCapacity?: number | null;
  bookingLimit?: number | null;
  maxBookingLimit?: number | null;
  maxResourceBookingLimit?: number | null;
  dailyBookingLimitCount?: number | null;
  dailyBookingLimitMinutes?: number | null;
  feeAmount?: number | null;
  feeTaxable?: boolean | null;
  cancellationFeeAmount?: number | null;
  cancellationFeeTaxable?: boolean | null;
  nonRefundable?: boolean | null;
  roundRobin?: number | string | null;
  imageUrl?: string | null;
  showOnline?: boolean | null;
}

export interface V1Resource extends V1Zone {
  id?: V1Id | null;
  locationId?: V1Id | null;
  name?: string | null;
  email?: string | null;
  /** Bookable services; an empty list means every service. */
  services?: Array<{ serviceId?: V1Id | null }> | null;
  availability?: V1WeeklyHours | null;
  deletedStatus?: boolean | null;
}

/** What service allocations, resource allocations and resource blocks share. */
export interface V1Window {
  id?: V1Id | null;
  resourceId?: V1Id | null;
  /** Date-time in blocks and resource allocations, a plain date string in service allocations. */
  startDate?: string | null;
  /** "9999-12-31…" repeats without end. */
  endDate?: string | null;
  startTime?: V1Hhmm | null;
  endTime?: V1Hhmm | null;
  repeats?: boolean | null;
  repeat?: V1Repeat | null;
  reason?: string | null;
}

export interface V1ServiceAllocation extends V1Window {
  serviceId?: V1Id | null;
  locationId?: V1Id | null;
  /** Bookings allowed per occurrence (inferred); 0 = the service's capacity. */
  bookingLimit?: number | null;
}

export interface V1ResourceAllocation extends V1Window {
  /** The location (inferred). */
  businessId?: V1Id | null;
}

export interface V1ResourceBlock extends V1Window {
  businessId?: V1Id | null;
}

/** Custom field values: a string or a `{name, value}` view, keyed field1 … field10. */
export type V1CustomFields = Record<string, string | { name?: string | null; value?: string | null } | null>;

export interface V1Customer {
  id?: V1Id | null;
  firstname?: string | null;
  lastname?: string | null;
  name?: string | null;
  email?: string | null;
  contact?: { mobilePhone?: string | null; businessPhone?: string | null; homePhone?: string | null } | null;
  customFields?: V1CustomFields | null;
  deletedStatus?: boolean | null;
}

export interface V1Appointment extends V1Zone {
  id?: V1Id | null;
  locationId?: V1Id | null;
  serviceId?: V1Id | null;
  resourceId?: V1Id | null;
  resources?: Array<{ resourceId?: V1Id | null }> | null;
  customerId?: V1Id | null;
  customers?: Array<{ customerId?: V1Id | null }> | null;
  /** ISO 8601, with or without an offset; without one it is wall time in the appointment's zone. */
  startDateTime?: string | null;
  endDateTime?: string | null;
  duration?: number | null;
  /** IN hold, BK booked, RS reserved, CN cancelled, RE rescheduled (consumer document). */
  status?: string | null;
  confirmed?: boolean | null;
  notes?: string | null;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  customFields?: V1CustomFields | null;
}

/** The export document of `POST /v3/migration/sync` (shared/spec/decisions.md, Migration). */
export interface V1Export {
  locations?: V1Location[] | null;
  services?: V1Service[] | null;
  resources?: V1Resource[] | null;
  serviceAllocations?: V1ServiceAllocation[] | null;
  resourceAllocations?: V1ResourceAllocation[] | null;
  resourceBlocks?: V1ResourceBlock[] | null;
  customers?: V1Customer[] | null;
  appointments?: V1Appointment[] | null;
}
