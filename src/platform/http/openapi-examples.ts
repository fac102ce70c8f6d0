/**
 * Example requests and answers in /openapi.json, one clinic throughout (the ones in docs/api.md).
 * Redocly's recommended rules check each example against its schema (test/platform/openapi-lint.test.ts).
 */

const COMPANY = '142c6874-b5a2-456e-9407-1489540116b7';
const LOCATION = '365ad694-db66-479f-8df0-4a6155a342ee';
const SERVICE = '92d7b44e-876a-430d-b7de-b6c36ad1e455';
const RESOURCE = 'b3914113-bd80-436d-b9a3-098d4e246c3d';
const CUSTOMER = '5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a';
const APPOINTMENT = '0b7c2a4e-1f3d-4c5b-8a9e-6d7f8e9a0b1c';
const USER = '7d2e4f6a-8b0c-4d1e-9f2a-3b4c5d6e7f80';
const CREATED = '2026-11-22T15:43:35.275Z';
const WEEKDAYS = { mon: [{ start: '09:00', end: '17:00' }], tue: [{ start: '09:00', end: '17:00' }], wed: [{ start: '09:00', end: '17:00' }], thu: [{ start: '09:00', end: '17:00' }], fri: [{ start: '09:00', end: '13:00' }] };
const CUSTOM_NULL = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i + 1}`, null]));
const SLOT = { startTime: '2026-12-07T10:00:00-05:00', endTime: '2026-12-07T11:00:00-05:00' };

const location = {
  id: LOCATION, companyId: COMPANY, name: 'Main Street', timezoneName: 'America/New_York', phone: '+12125550123', email: 'frontdesk@acme-dental.example',
  weeklyAvailability: WEEKDAYS, bookingTimerMinutes: 10, reminderOffsets: null, legacyId: null, createdAt: CREATED, updatedAt: CREATED,
  address: { addressLine1: '120 Main Street', city: 'New York', state: 'NY', postalCode: '10001', country: 'US' },
  company: { id: COMPANY, name: 'Acme Dental' }, services: [], resources: [],
};

const service = {
  id: SERVICE, companyId: COMPANY, name: 'Check-up', description: 'A 60-minute dental check-up', duration: 60, durationSelect: false,
  durationMin: null, durationMax: null, durationInterval: null, availabilityType: 'schedule', weeklyAvailability: null,
  bookAheadUnit: 'weeks', bookAheadValue: 8, bookInAdvance: 60, bookingLimit: 0, maxBookingLimit: 0, maxResourceBookingLimit: 0,
  dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0, bookingInterval: null, padding: 10, bookingsPerSlot: 1, feeAmount: 80,
  feeTaxable: false, cancellationFeeAmount: null, cancellationFeeTaxable: false, nonRefundable: false, imageUrl: null, showOnline: true,
  roundRobin: 'NONE', allowPaddingOverflow: false, ignoreExternalEvents: false, legacyId: null, locationIds: [LOCATION], ...CUSTOM_NULL,
  createdAt: CREATED, updatedAt: CREATED, company: { id: COMPANY, name: 'Acme Dental' }, locations: [{ id: LOCATION, name: 'Main Street' }], resources: [],
};

const resource = {
  id: RESOURCE, companyId: COMPANY, name: 'Dr. Ann Lee', email: 'ann.lee@acme-dental.example', phone: null, timezoneName: null,
  weeklyAvailability: null, bookingLimit: 0, legacyId: null, locationIds: [LOCATION], serviceIds: [SERVICE], createdAt: CREATED, updatedAt: CREATED,
  company: { id: COMPANY, name: 'Acme Dental' }, locations: [{ id: LOCATION, name: 'Main Street' }], services: [{ id: SERVICE, name: 'Check-up' }],
};

const customer = {
  id: CUSTOMER, companyId: COMPANY, firstName: 'Cara', lastName: 'Jones', email: 'cara.jones@example.com', phone: '2125550188', notes: null,
  legacyId: null, ...CUSTOM_NULL, field1: 'prefers mornings', createdAt: CREATED, updatedAt: CREATED,
};

const appointment = (status: 'IN' | 'BK', expiresAt: string | null) => ({
  id: APPOINTMENT, companyId: COMPANY, locationId: LOCATION, serviceId: SERVICE, customerId: CUSTOMER, resourceIds: [RESOURCE], status,
  startTime: '2026-12-07T15:00:00.000Z', endTime: '2026-12-07T16:00:00.000Z', duration: 60, padding: 10, timezoneName: 'America/New_York',
  expiresAt, confirmed: false, allowPaddingOverflow: false, ignoreExternalEvents: false, notes: 'first visit', ...CUSTOM_NULL,
  rescheduledFromId: null, rescheduledToId: null, legacyId: null, createdAt: CREATED, updatedAt: CREATED,
});

const slotBody = { Unavailability: SLOT, ResourceIds: [RESOURCE], CustomerId: CUSTOMER, duration: 60, notes: 'first visit' };
const recurring = { LocationId: LOCATION, name: 'Team meeting', frequency: 'WEEKLY', interval: 2, startDate: '2027-01-04', endDate: '2027-06-28', startTime: '09:30', endTime: '10:15', iana: 'America/New_York', weekdays: [1, 5] };
const webhook = { url: 'https://hooks.acme-dental.example/slotwise', headers: { 'x-shared-secret': 'change-me' }, triggers: ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'], active: true };

/** Request body examples by operationId (PATCH uses its PUT's). */
export const REQUEST_EXAMPLES: Record<string, unknown> = {
  signUp: { email: 'owner@acme-dental.example', password: 'correct horse battery', name: 'Olivia Owner' },
  logIn: { email: 'owner@acme-dental.example', password: 'correct horse battery' },
  updateCurrentUser: { name: 'Olivia Owner-Smith' },
  refreshAccessToken: { refresh_token: 'eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl91c2UiOiJyZWZyZXNoIn0.c2lnbmF0dXJl' },
  createCompany: { name: 'Acme Dental', allowedDomains: ['https://book.acme-dental.example'], reminderOffsets: [1440, 60] },
  updateCompany: {
    allowedDomains: ['https://book.acme-dental.example', 'https://www.acme-dental.example'],
    bookingPage: { brandColor: '#0b6e4f', logoUrl: 'https://www.acme-dental.example/logo.png', currency: 'EUR', fields: [{ name: 'field1', label: 'Reason for the visit', required: true }] },
  },
  getMachineToken: { grant_type: 'client_credentials', client_id: 'sw_client_4f1c2d3e', client_secret: 'sw_secret_9a8b7c6d5e4f', scope: 'read write' },
  createClientId: { name: 'Practice management sync' },
  createLocation: {
    name: 'Main Street', timezoneName: 'America/New_York', phone: '+12125550123', email: 'frontdesk@acme-dental.example',
    address: { addressLine1: '120 Main Street', city: 'New York', state: 'NY', postalCode: '10001', country: 'US' }, weeklyAvailability: WEEKDAYS, bookingTimerMinutes: 10,
  },
  updateLocation: { phone: '+12125550124', bookingTimerMinutes: 15 },
  createService: { name: 'Check-up', description: 'A 60-minute dental check-up', duration: 60, locationIds: [LOCATION], bookAheadUnit: 'weeks', bookAheadValue: 8, bookInAdvance: 60, padding: 10, feeAmount: 80, roundRobin: 'NONE' },
  updateService: { padding: 15, showOnline: true },
  createResource: { name: 'Dr. Ann Lee', email: 'ann.lee@acme-dental.example', locationIds: [LOCATION], serviceIds: [SERVICE] },
  updateResource: { weeklyAvailability: { tue: [{ start: '10:00', end: '18:00' }] } },
  createCustomer: { firstName: 'Cara', lastName: 'Jones', email: 'cara.jones@example.com', phone: '2125550188', field1: 'prefers mornings' },
  updateCustomer: { phone: '2125550199' },
  setUsers: { users: [{ email: 'frontdesk@acme-dental.example', role: 'User', locationAccessMode: 'LOCATIONS', allowedLocationIds: [LOCATION] }] },
  linkIdentity: { identityToken: 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImlkcC0xIn0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIn0.c2lnbmF0dXJl' },
  acceptInvitation: { token: 'inv_4mJ0xv2Qk8b1s9QeZr7Tq3LwYc5Nd6Hp', password: 'a long, unusual passphrase', name: 'Front Desk' },
  adjustUsers: { users: [{ id: USER, role: 'Admin', locationAccessMode: 'COMPANY' }] },
  createBlock: { ResourceId: RESOURCE, startTime: '2026-12-24T12:00:00-05:00', endTime: '2026-12-24T17:00:00-05:00', reason: 'Staff party' },
  createRecurringBlock: recurring,
  updateRecurringBlock: { frequency: 'MONTHLY', dayOfMonth: 15, interval: 1 },
  createHoliday: { LocationId: LOCATION, date: '2026-12-25', name: 'Christmas Day' },
  setWeeklyAllocations: { allocations: [{ day: 'mon', start: '09:00', end: '12:00', bookingsPerSlot: 2, legacyId: '4711' }, { day: 'wed', start: '13:00', end: '17:00' }] },
  setSingleAllocations: { allocations: [{ date: '2027-06-01', start: '09:00', end: '12:00', legacyId: '812' }] },
  createAppointment: slotBody,
  holdAppointment: { Unavailability: SLOT, ResourceIds: [RESOURCE] },
  updateAppointment: { notes: 'bring x-rays', field2: 'insurance checked' },
  reserveAppointment: { allowPaddingOverflow: false },
  bookAppointment: { name: 'Cara Jones', email: 'cara.jones@example.com', phone: '2125550188' },
  rescheduleAppointment: { Unavailability: { startTime: '2026-12-08T14:00:00-05:00', endTime: '2026-12-08T15:00:00-05:00' }, CustomerId: CUSTOMER },
  holdPublicAppointment: { Unavailability: SLOT, ResourceIds: [RESOURCE] },
  bookPublicAppointment: { name: 'Cara Jones', email: 'cara.jones@example.com', phone: '2125550188', field1: 'A loose filling' },
  rescheduleManagedAppointment: { Unavailability: { startTime: '2026-12-08T14:00:00-05:00', endTime: '2026-12-08T15:00:00-05:00' } },
  createWebhook: webhook,
  setWebhooks: { webhooks: [webhook] },
  updateWebhook: { active: false },
  connectExternalCalendar: { provider: 'google', redirectUrl: 'https://book.acme-dental.example/calendar-connected', useOnSchedCalendarSelection: true },
  createCalendarSelectionSession: { code: 'csc_Zx81Qm0pT4vR7yN2kL5sB9dW' },
  selectExternalCalendars: { calendarIds: ['ann.lee@acme-dental.example', 'holidays@group.calendar.example'], writeCalendarId: 'ann.lee@acme-dental.example' },
  migrateFromV1: {
    source: {
      type: 'export',
      data: {
        locations: [{ id: '12', name: 'Downtown Studio', timezoneIana: 'America/New_York', businessHours: { mon: { startTime: 900, endTime: 1900, isOpen: true, is24Hours: false } }, services: [] }],
        services: [{ id: '301', locationId: '12', type: '1', name: 'Personal Training', duration: 60, maxCapacity: 1, roundRobin: 2 }],
        resources: [{ id: '1502', locationId: '12', name: 'Ben Carter', email: 'ben@studio.example', timezoneIana: 'America/New_York', services: [] }],
      },
    },
    dryRun: true,
  },
  saveTemplate: { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'EMAIL', subject: 'See you on {{appointment.date}}', body: 'Hello {{customer.firstName}}, your {{service.name}} is booked for {{appointment.startTime}}.' },
};

/** Success answer examples by operationId: the main calls of a first booking. */
export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  logIn: { accessToken: 'eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl91c2UiOiJkYXNoYm9hcmQifQ.c2lnbmF0dXJl', tokenType: 'Bearer', expiresIn: 3600 },
  getMachineToken: { access_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzY29wZSI6InJlYWQgd3JpdGUifQ.c2lnbmF0dXJl', token_type: 'Bearer', expires_in: 3600, scope: 'read write' },
  createLocation: location,
  getLocation: location,
  createService: service,
  getService: service,
  createResource: resource,
  getResource: resource,
  createCustomer: customer,
  getCustomer: customer,
  searchAvailability: {
    timezoneName: 'America/New_York',
    availableTimes: [
      { startTime: '2026-12-07T14:00:00.000Z', endTime: '2026-12-07T15:00:00.000Z', resourceIds: [RESOURCE], remaining: 1 },
      { startTime: '2026-12-07T15:10:00.000Z', endTime: '2026-12-07T16:10:00.000Z', resourceIds: [RESOURCE], remaining: 1 },
    ],
    availableDays: [{ date: '2026-12-07', available: true, reason: null }],
  },
  holdAppointment: appointment('IN', '2026-12-01T12:10:00.000Z'),
  createAppointment: appointment('BK', null),
  bookAppointment: appointment('BK', null),
  getAppointment: appointment('BK', null),
};
