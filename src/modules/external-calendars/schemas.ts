import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Uuid } from '../../platform/http/schemas.js';
import { StringEnum } from '../catalog/fields.js';

export const ProviderField = StringEnum(['google', 'microsoft', 'caldav']);

/**
 * POST /v3/resource/:id/externalCalendar. One object for the three providers (the service says
 * which fields each needs, in words): google and microsoft take redirectUrl and
 * useOnSchedCalendarSelection; caldav takes url, username and password.
 */
export const ConnectBody = Type.Object(
  {
    provider: ProviderField,
    useOnSchedCalendarSelection: Type.Optional(Type.Boolean({ default: false, description: 'google, microsoft: the callback hands back a one-time code for a Calendar Selection Token' })),
    redirectUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'google, microsoft: where the browser returns; its host must be one of the company\'s allowedDomains' })),
    url: Type.Optional(Type.String({ maxLength: 2048, description: 'caldav: the server, principal or calendar URL (https)' })),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'caldav: an app password; stored encrypted, never returned' })),
  },
  { additionalProperties: false },
);
export type ConnectBody = Static<typeof ConnectBody>;

export const ConnectAnswer = Type.Object({
  id: Uuid(),
  provider: ProviderField,
  status: StringEnum(['pending', 'connected', 'error']),
  authUrl: Type.Optional(Type.String({ description: 'google, microsoft: open it in the user\'s browser' })),
});

export const Connection = Type.Object(
  {
    id: Uuid(),
    provider: ProviderField,
    status: StringEnum(['pending', 'connected', 'error']),
    lastSyncedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    writeCalendarId: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ExternalCalendarConnection' },
);

export const ConnectionList = Type.Object({ data: Type.Array(Type.Ref('ExternalCalendarConnection')) });

export const RemoteCalendar = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    primary: Type.Boolean(),
    selected: Type.Boolean(),
    canWrite: Type.Boolean(),
    write: Type.Boolean({ description: 'Booked appointments are written to this calendar' }),
  },
  { $id: 'ExternalCalendar' },
);
export const RemoteCalendarList = Type.Object({ data: Type.Array(Type.Ref('ExternalCalendar')) });

export const ListQuery = Type.Object({ provider: Type.Optional(ProviderField) }, { additionalProperties: false });

export const SelectBody = Type.Object(
  {
    provider: Type.Optional(ProviderField),
    calendarIds: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 100, uniqueItems: true, description: 'Calendars read as busy time' }),
    writeCalendarId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()], { description: 'Calendar booked appointments are written to; null stops writing' })),
  },
  { additionalProperties: false },
);
export type SelectBody = Static<typeof SelectBody>;

export const SyncAnswer = Type.Object({ imported: Type.Integer(), updated: Type.Integer(), removed: Type.Integer() });

export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 4096 })),
  error: Type.Optional(Type.String({ maxLength: 1024 })),
  error_description: Type.Optional(Type.String({ maxLength: 4096 })),
});
export type CallbackQuery = Static<typeof CallbackQuery>;

export const SelectionSessionBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

export const SelectionSessionAnswer = Type.Object({
  token: Type.String(),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer(),
  connectionId: Uuid(),
  resourceId: Uuid(),
});

export const ResourceParams = Type.Object({ id: Uuid() });
export const ConnectionParams = Type.Object({ id: Uuid(), connectionId: Uuid() });
