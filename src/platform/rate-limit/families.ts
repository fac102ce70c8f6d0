import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { fieldOf } from '../values.js';

/**
 * The rate-limit families of the specification (Limits, rules 3 and 4). Each family has budgets of
 * its own: a caller that spends its API read budget still has its API write budget, and so on.
 */
export const FAMILIES = {
  oauthToken: 'OAuth token',
  signIn: 'Sign-in',
  availability: 'Availability',
  apiRead: 'API read',
  apiWrite: 'API write',
  publicRead: 'Public read',
  publicWrite: 'Public write',
  appointmentList: 'Appointment list',
  appointmentCursor: 'Appointment cursor',
} as const;

export type Family = keyof typeof FAMILIES;

/** The message of a refusal: the family's name, as the specification's examples spell it. */
export const refusalMessage = (family: Family) => `${FAMILIES[family]} rate limit exceeded`;

export const OAUTH_TOKEN_ROUTE = '/v3/oauth/token';
/** Routes that take a password or a sign-in secret: each costs Argon2 work or guards an account. */
export const SIGN_IN_ROUTES = new Set([
  'POST /v3/auth/login',
  'POST /v3/auth/signup',
  'POST /v3/auth/token',
  'PUT /v3/auth/me',
  'POST /v3/auth/acceptInvitation',
  // They take a one-time secret (an OAuth code and state, a selection code) with no credential:
  // counted per address like every sign-in.
  'GET /v3/calendar/callback',
  'POST /v3/calendar/selectionSession',
]);
export const PUBLIC_HOLD_ROUTE = '/v3/public/appointment/hold';
export const PUBLIC_BOOK_ROUTE = '/v3/public/appointment/:id/book';
export const APPOINTMENT_LIST_ROUTE = '/v3/appointments';
export const APPOINTMENT_CURSOR_ROUTE = '/v3/appointments/cursor';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The family of a request to an authenticated `/v3` route, from its route pattern (never the raw
 * URL) and method. Routes outside `/v3` (health, readiness, docs, OpenAPI, metrics) have none, nor
 * has the OAuth token route here: it is counted by client id before authentication matters.
 */
export function familyOf(method: string, routeUrl: string | undefined): Family | undefined {
  if (!routeUrl?.startsWith('/v3/') || routeUrl === OAUTH_TOKEN_ROUTE) return undefined;
  if (SIGN_IN_ROUTES.has(`${method} ${routeUrl}`)) return 'signIn';
  const read = READ_METHODS.has(method);
  // Public booking pages: their availability search is a public read like the rest of the page.
  // A customer's manage page (modules/manage) is a public page too.
  if (routeUrl.startsWith('/v3/public/') || routeUrl.startsWith('/v3/manage/')) return read ? 'publicRead' : 'publicWrite';
  if (read && routeUrl === '/v3/availability') return 'availability';
  if (read && routeUrl === APPOINTMENT_LIST_ROUTE) return 'appointmentList';
  if (read && routeUrl === APPOINTMENT_CURSOR_ROUTE) return 'appointmentCursor';
  return read ? 'apiRead' : 'apiWrite';
}

/**
 * Whose budget a request spends: the company for machine clients and public booking pages, the
 * user within the company for dashboard users (so one busy dashboard user does not starve the
 * company's integrations), and the user alone for a dashboard JWT used without a company. The
 * appointment lists have a company budget whoever calls (Limits 4).
 */
export function callerKey(principal: Principal, family: Family): string {
  if ((family === 'appointmentList' || family === 'appointmentCursor') && 'companyId' in principal) return `company:${principal.companyId}`;
  if (family === 'signIn' && 'userId' in principal) return `user:${principal.userId}`;
  switch (principal.kind) {
    case 'machine':
    case 'public':
      return `company:${principal.companyId}`;
    case 'dashboard':
      return `user:${principal.companyId}:${principal.userId}`;
    case 'user':
      return `user:${principal.userId}`;
    case 'calendarSelection':
      return `calendarSelection:${principal.selection.connectionId}`;
    case 'manage':
      return `manage:${principal.manage.companyId}:${principal.manage.appointmentId}`;
  }
}

/** The company whose admission slots a request takes (per-company concurrency cap). */
export function admissionKey(principal: Principal): string {
  if (principal.kind === 'calendarSelection') return principal.selection.companyId;
  if (principal.kind === 'manage') return principal.manage.companyId;
  return 'companyId' in principal ? principal.companyId : `user:${principal.userId}`;
}

/**
 * The client id of a token request, from the form (or JSON) body or HTTP Basic, read leniently:
 * a malformed header is the token route's to refuse, not the limiter's. Long ids are cut, so a
 * key never grows with what a caller sends.
 */
export function oauthClientId(request: FastifyRequest): string | undefined {
  const bodyClientId = fieldOf(request.body, 'client_id');
  let clientId = typeof bodyClientId === 'string' && bodyClientId !== '' ? bodyClientId : undefined;
  const header = request.headers.authorization;
  if (clientId === undefined && header) {
    const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
    if (match) {
      const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) {
        try {
          clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
        } catch {
          clientId = decoded.slice(0, colon);
        }
      }
    }
  }
  return clientId?.slice(0, 200);
}
