/**
 * @slotwise/client: the Slotwise API through openapi-fetch, typed by src/schema.ts (generated from
 * the served /openapi.json by `npm run client:generate`). Every path, parameter, body and answer is
 * checked by the TypeScript compiler; an error answer comes back typed as `ErrorBody` in `error`.
 */
import createClient, { mergeHeaders } from 'openapi-fetch';
import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

type Schemas = components['schemas'];
/** Every error answer: `{success: false, message, errors, requestId}` plus `code` where one applies. */
export type ErrorBody = Schemas['ErrorBody'];
export type Company = Schemas['Company'];
export type ClientCredential = Schemas['ClientCredential'];
export type Location = Schemas['Location'];
export type Service = Schemas['Service'];
export type Resource = Schemas['Resource'];
export type Customer = Schemas['Customer'];
/** The answer of `GET /v3/availability` (and of the public booking page's availability). */
export type Availability = Schemas['Availability'];
/** One free time of an availability answer: what a hold takes. */
export type AvailableTime = Availability['availableTimes'][number];
/**
 * The answer of the same searches with `format=compact`: each resource id once, in `resources`, and
 * each slot's resources as indexes into it (the 200 of the document describes the full form).
 */
export type AvailabilityCompact = Omit<Availability, 'availableTimes'> & {
  resources: string[];
  availableTimes: Array<Omit<AvailableTime, 'resourceIds'> & { resourceIndexes: number[] }>;
};
export type Appointment = Schemas['Appointment'];
/** The manage link's view of its appointment (`/v3/manage/*`): what the customer sees and may change. */
export type ManagedAppointment = Schemas['ManagedAppointment'];
export type Webhook = Schemas['Webhook'];
export type Notification = Schemas['Notification'];

export type SlotwiseClient = Client<paths>;

export interface SlotwiseClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The API's origin, e.g. `https://api.slotwise.example` (the paths start with `/v3`). */
  baseUrl: string;
  /**
   * Sent as `Authorization: Bearer`: a machine token from `POST /v3/oauth/token`, a dashboard JWT
   * from `POST /v3/auth/login` (which company routes want together with `apiKey`), or a customer's
   * manage link token (the `/manage/<token>` of their emails), which opens `/v3/manage/*` only.
   */
  accessToken?: string;
  /** The company's API key, sent as `x-api-key` beside a dashboard JWT. Machine tokens ignore it. */
  apiKey?: string;
  /**
   * The company's public client id, sent as `x-client-id` on `/v3/public/*` (booking pages). The
   * browser sends `Origin` itself, and the company must allow that host (docs/api.md).
   */
  clientId?: string;
}

/** A client of the whole API with the given credentials; headers given in `headers` come on top. */
export function createSlotwiseClient(options: SlotwiseClientOptions): SlotwiseClient {
  const { accessToken, apiKey, clientId, headers, ...rest } = options;
  const credentials: Record<string, string> = {};
  if (accessToken !== undefined) credentials.authorization = `Bearer ${accessToken}`;
  if (apiKey !== undefined) credentials['x-api-key'] = apiKey;
  if (clientId !== undefined) credentials['x-client-id'] = clientId;
  return createClient<paths>({ ...rest, headers: mergeHeaders(credentials, headers) });
}
