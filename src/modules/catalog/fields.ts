import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';

/**
 * Field schemas shared by the catalog records. `x-codes` names the legacy (v1) catalog code of
 * each rule, so a failing field's error entry carries it (see platform/errors.ts).
 */
type Codes = Record<string, string>;

export const Name = (maxLength: number, codes: Codes = {}) =>
  Type.String({ minLength: 1, maxLength, 'x-codes': codes });

/** An IANA time zone name such as Europe/London or Asia/Kolkata (format checked with Luxon). */
export const TimezoneName = (codes: Codes) =>
  Type.String({ format: 'iana-timezone', maxLength: 64, 'x-codes': codes, description: 'IANA time zone name, for example Europe/London' });

export const EmailField = (codes: Codes = {}) =>
  Type.String({ format: 'email', maxLength: 254, 'x-codes': { format: 'EMAIL-101', maxLength: 'EMAIL-100', ...codes } });

export const Phone = (code: string) =>
  Type.String({ minLength: 7, maxLength: 15, 'x-codes': { minLength: code, maxLength: code }, description: '7 to 15 characters' });

const Time = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM' });
const EndTime = Type.String({ pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$', description: 'HH:MM; 24:00 ends at midnight' });
const Interval = Type.Object({ start: Time, end: EndTime }, { additionalProperties: false });
const Day = Type.Array(Interval, { maxItems: 24 });

export const WeeklyAvailability = Type.Object(
  {
    mon: Type.Optional(Day),
    tue: Type.Optional(Day),
    wed: Type.Optional(Day),
    thu: Type.Optional(Day),
    fri: Type.Optional(Day),
    sat: Type.Optional(Day),
    sun: Type.Optional(Day),
  },
  { additionalProperties: false, description: 'Open hours per weekday; a missing or empty day is closed' },
);

export const Address = Type.Object(
  {
    addressLine1: Type.Optional(Type.String({ minLength: 2, maxLength: 50, 'x-codes': { minLength: 'ADDRESS-100', maxLength: 'ADDRESS-100' } })),
    addressLine2: Type.Optional(Type.String({ minLength: 2, maxLength: 50, 'x-codes': { minLength: 'ADDRESS-101', maxLength: 'ADDRESS-101' } })),
    city: Type.Optional(Type.String({ minLength: 2, maxLength: 50, 'x-codes': { minLength: 'ADDRESS-102', maxLength: 'ADDRESS-102' } })),
    state: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 3,
        description: 'The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH)',
        'x-codes': { minLength: 'ADDRESS-103', maxLength: 'ADDRESS-103' },
      }),
    ),
    postalCode: Type.Optional(Type.String({ minLength: 2, maxLength: 10, 'x-codes': { minLength: 'ADDRESS-105', maxLength: 'ADDRESS-105' } })),
    country: Type.String({
      pattern: '^[A-Za-z]{2}$',
      description: 'ISO 3166-1 alpha-2 country code, for example GB (stored in capitals)',
      'x-codes': { required: 'ADDRESS-106', pattern: 'ADDRESS-104' },
    }),
  },
  {
    additionalProperties: false,
    description: 'The legacy AddressLine1, AddressLine2, City, State, PostalCode and Country in camelCase',
    examples: [{ addressLine1: '1 Main Street', city: 'London', postalCode: 'EC1A 1AA', country: 'GB' }],
  },
);

/** One schema per custom field, field1 .. field10, each typed by name (so `Static` names them too). */
const byCustomField = <T extends TSchema>(schema: (n: number) => T) => ({
  field1: schema(1),
  field2: schema(2),
  field3: schema(3),
  field4: schema(4),
  field5: schema(5),
  field6: schema(6),
  field7: schema(7),
  field8: schema(8),
  field9: schema(9),
  field10: schema(10),
});

/** field1 .. field10: at most 255 characters each (CUSTOMF-100 .. CUSTOMF-109). */
export const CustomFields = () =>
  byCustomField((n) => Type.Optional(Type.String({ maxLength: 255, 'x-codes': { maxLength: `CUSTOMF-${99 + n}` } })));

/** Custom fields in responses: null when never set. */
export const CustomFieldsOut = () => byCustomField(() => Type.Union([Type.String(), Type.Null()]));

/** A string from a fixed set: one `enum` (so the error lists the values), typed as the union. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const CUSTOM_FIELD_NAMES = ['field1', 'field2', 'field3', 'field4', 'field5', 'field6', 'field7', 'field8', 'field9', 'field10'] as const;

/** `codes` names the legacy code of a repeated id (`uniqueItems`), for example LOCATION-110. */
export const IdList = (description: string, codes: Codes = {}) =>
  Type.Array(Type.String({ format: 'uuid' }), { maxItems: 500, uniqueItems: true, description, ...(Object.keys(codes).length ? { 'x-codes': codes } : {}) });

export const Summary = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() });

/** `include=services,resources`: names, comma-separated, from the list's own set. */
export const IncludeQuery = (names: string[]) =>
  Type.Optional(
    Type.String({
      pattern: `^(${names.join('|')})(,(${names.join('|')}))*$`,
      description: `Comma-separated, any of: ${names.join(', ')}`,
    }),
  );

export function parseInclude(value: string | undefined): Set<string> {
  return new Set((value ?? '').split(',').filter(Boolean));
}

/** Reminder offsets: minutes before the start (at most a week), distinct, at most five. */
export const ReminderOffsets = Type.Array(Type.Integer({ minimum: 1, maximum: 10_080, 'x-codes': { minimum: 'APPOINTMENTREMINDERS-102', type: 'APPOINTMENTREMINDERS-102' } }), {
  maxItems: 5,
  uniqueItems: true,
  // Two reminders at the same offset: the legacy "second reminder must be after the first".
  'x-codes': { uniqueItems: 'APPOINTMENTREMINDERS-103' },
  description: 'Minutes before the start, for example [1440, 60]; at most five, each 1 to 10080',
});
