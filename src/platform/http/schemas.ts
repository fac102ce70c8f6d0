import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';

/** The specification's error body, for the OpenAPI document and response serialisation. */
export const ErrorBodySchema = Type.Object(
  {
    success: Type.Literal(false),
    message: Type.String(),
    errors: Type.Array(
      Type.Object({
        type: Type.Literal('field'),
        location: Type.Union([Type.Literal('body'), Type.Literal('query'), Type.Literal('params'), Type.Literal('headers')]),
        path: Type.String({ description: 'Dot notation, for example Customer.email' }),
        msg: Type.String(),
        code: Type.Optional(Type.String({ description: 'Legacy (v1) catalog code where one applies' })),
      }),
    ),
    code: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String({ description: 'Present on 500: quote it to support' })),
  },
  { $id: 'ErrorBody', description: 'Every failure has this body. The HTTP status is not repeated in it.' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request data is wrong (validation, an id that is not the company\'s, a booking rule)',
  401: 'Missing, invalid or expired credentials',
  403: 'Not allowed for this caller (scope, role, suspended company, machine token, Origin)',
  404: 'The record in the path does not exist, is archived, or belongs to another company',
  409: 'Conflicts with an existing record',
  410: 'Gone for good: the manage link\'s appointment was cancelled or moved to a new time',
  429: 'Rate limit exceeded; retry after Retry-After seconds',
};

export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of statuses) {
    responses[status] = Type.Ref('ErrorBody', { description: ERROR_DESCRIPTIONS[status] ?? 'Error' });
  }
  return responses;
}

/** A value or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Uuid = (options: { description?: string } = {}) => Type.String({ format: 'uuid', ...options });

export const IdParams = Type.Object({ id: Uuid() });

export const PageQueryFields = (maxLimit: number, defaultLimit = 20) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit, description: `Page size, at most ${maxLimit}`, 'x-codes': { maximum: 'LIMIT-100' } })),
  // Bounded so that (page - 1) * limit always fits the database's offset: a page beyond it is a 400, not a 500.
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1 (at most 1,000,000)' })),
});

export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), page: Type.Integer(), limit: Type.Integer(), total: Type.Integer() });

export const Email = (options: { description?: string } = {}) =>
  Type.String({ format: 'email', maxLength: 254, ...options });

type SecurityRequirement = Record<string, string[]>;
const anyOf = (...requirements: SecurityRequirement[]): SecurityRequirement[] => requirements;
/** OpenAPI security requirements, by who may call. */
export const Security = {
  company: anyOf({ machineToken: [] }, { dashboardJwt: [], apiKey: [] }),
  dashboardCompany: anyOf({ dashboardJwt: [], apiKey: [] }),
  dashboardUser: anyOf({ dashboardJwt: [] }),
  userOrMachine: anyOf({ machineToken: [] }, { dashboardJwt: [] }),
  public: anyOf({ publicClientId: [] }),
  /** Company credentials, or the Calendar Selection Token of the path's connection. */
  companyOrCalendarSelection: anyOf({ machineToken: [] }, { dashboardJwt: [], apiKey: [] }, { calendarSelectionToken: [] }),
  /** A customer's manage-link token (modules/manage). */
  manage: anyOf({ manageToken: [] }),
};

/**
 * Dates and instants between 1900 and 2999: far enough for any schedule, and always storable and
 * computable. Every date or instant a request carries uses one of these, so an extreme year is a
 * 400, never a 500.
 */
export const LocalDate = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'date', formatMinimum: '1900-01-01', formatMaximum: '2999-12-31', ...options });
export const Instant = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'date-time', formatMinimum: '1900-01-01T00:00:00Z', formatMaximum: '2999-12-31T23:59:59Z', ...options });
