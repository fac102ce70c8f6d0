// Builders for engine inputs shared by the domain tests: a service with every limit off, and a
// search of one day at a location open 09:00-17:00 every day, in UTC unless overridden.
import type { AvailabilityInput, EngineService } from '../../src/domain/availability.js';
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';
import { EVERY_DAY, weekly } from '../helpers/hours.js';

export const everyDay = (start: string, end: string): WeeklySchedule => weekly([{ start, end }]);

export const engineService = (overrides: Partial<EngineService> = {}): EngineService => ({
  id: 'svc',
  duration: 60,
  availabilityType: 'schedule',
  weeklyAvailability: null,
  bookInAdvance: 0,
  bookAheadUnit: 'none',
  bookAheadValue: null,
  bookingInterval: null,
  padding: 0,
  bookingsPerSlot: 1,
  dailyBookingLimitCount: 0,
  dailyBookingLimitMinutes: 0,
  bookingLimit: 0,
  maxBookingLimit: 0,
  maxResourceBookingLimit: 0,
  allowPaddingOverflow: false,
  ...overrides,
});

export const engineInput = (overrides: Partial<AvailabilityInput> = {}): AvailabilityInput => ({
  now: Date.parse('2026-01-01T00:00:00Z'),
  timezoneName: 'UTC',
  locationWeekly: EVERY_DAY,
  service: engineService(),
  resources: [{ id: 'r1', timezoneName: null, weeklyAvailability: null, bookingLimit: 0 }],
  startDate: '2026-03-02',
  endDate: '2026-03-02',
  duration: 60,
  roundRobin: 'NONE',
  busy: [],
  appointments: [],
  dailyUsage: {},
  ...overrides,
});
