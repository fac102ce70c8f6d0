// Column types that the domain defines are imported from it, never declared twice.
import type { AppointmentStatus } from '../../domain/booking.js';
import type { RoundRobin } from '../../domain/availability.js';
import type { Frequency as RecurrenceFrequency } from '../../domain/recurrence.js';
import type { BookAheadUnit } from '../../domain/service-rules.js';
import type { WeeklySchedule } from '../../domain/weekly-availability.js';
import type { Address } from '../../domain/address.js';
import type { BookingPageSettings } from '../../domain/booking-page.js';
import type { ColumnType, Generated } from 'kysely';

/** Column types of every table, in camelCase (the CamelCasePlugin maps them to snake_case). */

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface ServiceSecretsTable {
  name: string;
  value: string;
  createdAt: CreatedAt;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  passwordHash: string | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
  tokenVersion: Generated<number>;
  emailVerifiedAt: Date | null;
  failedSignIns: Generated<number>;
  signInLockedUntil: Date | null;
}

export interface ExternalIdentitiesTable {
  issuer: string;
  subject: string;
  userId: string;
  createdAt: CreatedAt;
}

export interface InvitationsTable {
  companyId: string;
  id: string;
  email: string;
  role: Role;
  locationAccessMode: Generated<LocationAccessMode>;
  allowedLocationIds: Generated<string[]>;
  linkedResourceId: string | null;
  tokenHash: string;
  invitedByUserId: string | null;
  expiresAt: Date;
  acceptedAt: Date | null;
  createdAt: CreatedAt;
}

export interface CompaniesTable {
  id: string;
  name: string;
  apiKeyHash: string;
  apiKeyPrefix: string;
  publicClientId: string;
  allowedDomains: ColumnType<string[], string[] | undefined, string[]>;
  disableEmailNotifications: Generated<boolean>;
  disableSmsNotifications: Generated<boolean>;
  reminderOffsets: ColumnType<number[], number[] | undefined, number[]>;
  bookingPage: ColumnType<BookingPageSettings, string | undefined, string>;
  suspendedAt: Date | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export type Role = 'Owner' | 'Admin' | 'User' | 'Resource';
export type LocationAccessMode = 'COMPANY' | 'LOCATIONS';

export interface CompanyUsersTable {
  companyId: string;
  userId: string;
  role: Role;
  locationAccessMode: Generated<LocationAccessMode>;
  allowedLocationIds: ColumnType<string[], string[] | undefined, string[]>;
  linkedResourceId: string | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface ClientCredentialsTable {
  companyId: string;
  id: string;
  clientId: string;
  secretHash: string;
  name: string | null;
  createdByUserId: string | null;
  createdAt: CreatedAt;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface RefreshTokensTable {
  companyId: string;
  id: string;
  userId: string;
  familyId: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  createdAt: CreatedAt;
}

/** `{"mon": [{"start": "09:00", "end": "17:00"}], ...}`: a missing or empty day is closed. */
/** Opening hours as stored: the domain's weekly schedule. */
export type WeeklyAvailability = WeeklySchedule;

export type { Address };

type Json<T> = ColumnType<T, string | undefined | null, string | null>;
type Archived = { archivedAt: Date | null; legacyId: string | null; createdAt: CreatedAt; updatedAt: Timestamp };
type CustomFields = {
  field1: string | null; field2: string | null; field3: string | null; field4: string | null; field5: string | null;
  field6: string | null; field7: string | null; field8: string | null; field9: string | null; field10: string | null;
};

export interface LocationsTable extends Archived {
  companyId: string;
  id: string;
  name: string;
  timezoneName: string;
  address: Json<Address | null>;
  phone: string | null;
  email: string | null;
  weeklyAvailability: Json<WeeklyAvailability | null>;
  bookingTimerMinutes: Generated<number>;
  reminderOffsets: ColumnType<number[] | null, number[] | null | undefined, number[] | null>;
}

export type { BookAheadUnit, RecurrenceFrequency, RoundRobin };
export type AvailabilityType = 'schedule' | 'allocation';

export interface ServicesTable extends Archived, CustomFields {
  companyId: string;
  id: string;
  name: string;
  description: string | null;
  duration: number;
  durationSelect: Generated<boolean>;
  durationMin: number | null;
  durationMax: number | null;
  durationInterval: number | null;
  availabilityType: Generated<AvailabilityType>;
  weeklyAvailability: Json<WeeklyAvailability | null>;
  bookAheadUnit: Generated<BookAheadUnit>;
  bookAheadValue: number | null;
  bookInAdvance: Generated<number>;
  bookingLimit: Generated<number>;
  maxBookingLimit: Generated<number>;
  maxResourceBookingLimit: Generated<number>;
  dailyBookingLimitCount: Generated<number>;
  dailyBookingLimitMinutes: Generated<number>;
  bookingInterval: number | null;
  padding: Generated<number>;
  bookingsPerSlot: Generated<number>;
  feeAmount: number | null;
  feeTaxable: Generated<boolean>;
  cancellationFeeAmount: number | null;
  cancellationFeeTaxable: Generated<boolean>;
  nonRefundable: Generated<boolean>;
  imageUrl: string | null;
  showOnline: Generated<boolean>;
  roundRobin: Generated<RoundRobin>;
  allowPaddingOverflow: Generated<boolean>;
  ignoreExternalEvents: Generated<boolean>;
}

export interface ResourcesTable extends Archived {
  companyId: string;
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  timezoneName: string | null;
  weeklyAvailability: Json<WeeklyAvailability | null>;
  bookingLimit: Generated<number>;
}

export interface CustomersTable extends Archived, CustomFields {
  companyId: string;
  id: string;
  firstName: string;
  lastName: string | null;
  email: string;
  phone: string | null;
  notes: string | null;
}

export interface ServiceLocationsTable { companyId: string; serviceId: string; locationId: string }
export interface ResourceLocationsTable { companyId: string; resourceId: string; locationId: string }
export interface ResourceServicesTable { companyId: string; resourceId: string; serviceId: string }

type Scope = { locationId: string | null; resourceId: string | null; serviceId: string | null };

export interface BlocksTable extends Scope {
  companyId: string;
  id: string;
  startTime: Date;
  endTime: Date;
  reason: string | null;
  createdAt: CreatedAt;
}


export interface RecurringBlocksTable extends Scope {
  companyId: string;
  id: string;
  name: string;
  frequency: RecurrenceFrequency;
  interval: Generated<number>;
  startDate: string;
  endDate: string | null;
  startTime: string;
  endTime: string;
  iana: string;
  weekdays: ColumnType<number[], number[] | undefined, number[]>;
  dayOfMonth: number | null;
  legacyId: string | null;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface HolidaysTable {
  companyId: string;
  id: string;
  locationId: string;
  date: string;
  name: string;
  createdAt: CreatedAt;
}

interface AllocationColumns {
  companyId: string;
  id: string;
  locationId: string;
  serviceId: string | null;
  resourceId: string | null;
  startTime: string;
  endTime: string;
  bookingsPerSlot: number | null;
  legacyId: string | null;
  createdAt: CreatedAt;
}
export interface WeeklyAllocationsTable extends AllocationColumns {
  day: 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
}
export interface SingleAllocationsTable extends AllocationColumns {
  date: string;
}

/** The status codes of the States and transitions table (defined with the rules, in the domain). */
export type { AppointmentStatus };

export interface AppointmentsTable extends CustomFields {
  companyId: string;
  id: string;
  locationId: string;
  serviceId: string;
  customerId: string | null;
  status: AppointmentStatus;
  startTime: Date;
  endTime: Date;
  duration: number;
  padding: Generated<number>;
  expiresAt: Date | null;
  confirmed: Generated<boolean>;
  allowPaddingOverflow: Generated<boolean>;
  ignoreExternalEvents: Generated<boolean>;
  notes: string | null;
  rescheduledFromId: string | null;
  rescheduledToId: string | null;
  legacyId: string | null;
  createdVia: Generated<'api' | 'public' | 'migration'>;
  customerUnconfirmed: Generated<boolean>;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export type EventTrigger = 'NEW_APPOINTMENT' | 'APPOINTMENT_CONFIRMED' | 'APPOINTMENT_CANCELLED' | 'APPOINTMENT_RESCHEDULED' | 'APPOINTMENT_REMINDER';

export interface OutboxEventsTable {
  companyId: string;
  id: string;
  trigger: EventTrigger;
  appointmentId: string;
  locationId: string;
  payload: ColumnType<unknown, string, string>;
  createdAt: CreatedAt;
  processedAt: Date | null;
  claimedAt: Date | null;
  claimedBy: string | null;
}

export type TemplateType = 'APPOINTMENT_BOOKED' | 'APPOINTMENT_CONFIRMED' | 'APPOINTMENT_CANCELLED' | 'APPOINTMENT_RESCHEDULED' | 'APPOINTMENT_REMINDER' | 'EXTERNAL_CALENDAR_EVENT';
export type RecipientType = 'CUSTOMER' | 'RESOURCE' | 'BUSINESS';
export type Channel = 'EMAIL' | 'SMS';

export interface WebhooksTable {
  companyId: string;
  id: string;
  locationId: string;
  url: string;
  headers: ColumnType<Record<string, string>, string | undefined, string>;
  triggers: ColumnType<string[], string[] | undefined, string[]>;
  active: Generated<boolean>;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface WebhookDeliveriesTable {
  companyId: string;
  id: string;
  webhookId: string;
  eventId: string;
  trigger: string;
  appointmentId: string;
  url: string;
  outcome: Generated<'pending' | 'delivered' | 'failed' | 'interrupted'>;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  address: string | null;
  createdAt: CreatedAt;
  finishedAt: Date | null;
}

export interface NotificationTemplatesTable {
  companyId: string;
  id: string;
  type: TemplateType;
  recipientType: RecipientType;
  channel: Generated<Channel>;
  subject: Generated<string>;
  body: string;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface NotificationsTable {
  companyId: string;
  id: string;
  eventId: string;
  appointmentId: string;
  type: string;
  channel: Channel;
  recipientType: RecipientType;
  recipient: string;
  subject: string | null;
  body: string;
  status: Generated<'pending' | 'sent' | 'not_sent' | 'failed' | 'interrupted'>;
  reason: string | null;
  providerId: string | null;
  createdAt: CreatedAt;
  finishedAt: Date | null;
}

export interface AppointmentRemindersTable {
  companyId: string;
  appointmentId: string;
  offsetMinutes: number;
  eventId: string;
  createdAt: CreatedAt;
}

export interface IdempotencyKeysTable {
  companyId: string;
  key: string;
  requestHash: string;
  statusCode: number | null;
  response: ColumnType<unknown, string | null | undefined, string | null>;
  createdAt: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface AppointmentResourcesTable {
  companyId: string;
  appointmentId: string;
  resourceId: string;
  startTime: Date;
  endTime: Date;
  status: AppointmentStatus;
  expiresAt: Date | null;
  /**
   * Copies of the appointment's (migrations/0014): the availability engine reads them here, so busy
   * time needs no join. Optional on insert only because a trigger copies them when left out.
   */
  serviceId: ColumnType<string, string | undefined, string>;
  duration: ColumnType<number, number | undefined, number>;
  padding: ColumnType<number, number | undefined, number>;
  /** start_time and end_time as epoch milliseconds, generated by the database (migrations/0015): never written. */
  startMs: ColumnType<number, never, never>;
  endMs: ColumnType<number, never, never>;
}

export type ExternalProvider = 'google' | 'microsoft' | 'caldav';
export type ExternalConnectionStatus = 'pending' | 'connected' | 'error';

/** migrations/0009_external_calendars.sql */
export interface ExternalCalendarConnectionsTable {
  companyId: string;
  id: string;
  resourceId: string;
  provider: ExternalProvider;
  status: ExternalConnectionStatus;
  useSelection: Generated<boolean>;
  redirectUrl: string | null;
  stateNonce: string | null;
  stateExpiresAt: Date | null;
  codeVerifierEnc: string | null;
  selectionCodeHash: string | null;
  selectionCodeExpiresAt: Date | null;
  credentialsEnc: string | null;
  writeCalendarId: string | null;
  lastSyncedAt: Date | null;
  lastError: string | null;
  nextSyncAt: Date | null;
  syncClaimedAt: Date | null;
  syncClaimedBy: string | null;
  createdAt: CreatedAt;
}

export interface ExternalCalendarsTable {
  companyId: string;
  connectionId: string;
  calendarId: string;
  name: string;
  syncCursor: string | null;
}

export interface ExternalBusyIntervalsTable {
  companyId: string;
  connectionId: string;
  calendarId: string;
  eventKey: string;
  resourceId: string;
  startTime: Date;
  endTime: Date;
  transparency: string | null;
  eventType: string | null;
}

export interface ExternalEventWritesTable {
  companyId: string;
  appointmentId: string;
  connectionId: string;
  calendarId: string;
  providerEventId: string | null;
  eventAppointmentId: string;
  desired: 'present' | 'absent';
  startTime: Date | null;
  endTime: Date | null;
  done: Generated<boolean>;
  attempts: Generated<number>;
  nextAttemptAt: Generated<Date>;
  lastError: string | null;
  claimedAt: Date | null;
  claimedBy: string | null;
  revision: Generated<number>;
  updatedAt: Generated<Date>;
}

/** One run of the v1 importer (migrations/0011_migration_jobs.sql). */
export interface MigrationJobsTable {
  companyId: string;
  id: string;
  status: 'running' | 'succeeded' | 'failed';
  dryRun: boolean;
  sourceType: 'api' | 'export';
  requestedBy: string | null;
  progress: ColumnType<unknown, string | undefined, string>;
  report: Json<unknown>;
  error: string | null;
  attempts: Generated<number>;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  createdAt: Generated<Date>;
  updatedAt: Generated<Date>;
  finishedAt: Date | null;
}

export interface MigrationJobSourcesTable {
  companyId: string;
  jobId: string;
  source: ColumnType<unknown, string, string>;
}

export interface Database {
  blocks: BlocksTable;
  recurringBlocks: RecurringBlocksTable;
  holidays: HolidaysTable;
  weeklyAllocations: WeeklyAllocationsTable;
  singleAllocations: SingleAllocationsTable;
  appointments: AppointmentsTable;
  appointmentResources: AppointmentResourcesTable;
  outboxEvents: OutboxEventsTable;
  idempotencyKeys: IdempotencyKeysTable;
  webhooks: WebhooksTable;
  webhookDeliveries: WebhookDeliveriesTable;
  notificationTemplates: NotificationTemplatesTable;
  notifications: NotificationsTable;
  appointmentReminders: AppointmentRemindersTable;
  locations: LocationsTable;
  services: ServicesTable;
  resources: ResourcesTable;
  customers: CustomersTable;
  serviceLocations: ServiceLocationsTable;
  resourceLocations: ResourceLocationsTable;
  resourceServices: ResourceServicesTable;
  serviceSecrets: ServiceSecretsTable;
  users: UsersTable;
  companies: CompaniesTable;
  companyUsers: CompanyUsersTable;
  clientCredentials: ClientCredentialsTable;
  refreshTokens: RefreshTokensTable;
  externalIdentities: ExternalIdentitiesTable;
  invitations: InvitationsTable;
  externalCalendarConnections: ExternalCalendarConnectionsTable;
  externalCalendars: ExternalCalendarsTable;
  externalBusyIntervals: ExternalBusyIntervalsTable;
  externalEventWrites: ExternalEventWritesTable;
  migrationJobs: MigrationJobsTable;
  migrationJobSources: MigrationJobSourcesTable;
}
