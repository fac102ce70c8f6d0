import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { sha256 } from '../crypto.js';
import { ApiError, errorAnswer, forbidden, unauthorized } from '../errors.js';
import { assertMachineContext, SUSPENDED_MESSAGE } from './credential-check.js';

export { SUSPENDED_MESSAGE };
import type { Access, Principal } from './principal.js';
import type { PrincipalRepository } from './principal-repository.js';
import { ManageTokenError, TokenError } from './tokens.js';
import type { TokenService } from './tokens.js';

export const INVALID_CLIENT_ID_MESSAGE = 'Invalid Client ID';
export const USER_NOT_ASSOCIATED_MESSAGE = 'User is not associated with the company of this API key';
export const CALENDAR_SELECTION_TOKEN_MESSAGE = 'A Calendar Selection Token is valid only for the list, select and disconnect calls of its own connection';
export const MANAGE_LINK_UNKNOWN_MESSAGE = 'Invalid manage link: it names no appointment of this company';
export const DOCS_TOKEN_MESSAGE = 'A docs token only opens the documentation at /docs; it cannot call the API';

/** Why an identity provider's token does not sign anyone in. */
export const OIDC_REFUSALS = {
  'no-email': 'The identity token has no email claim and is not linked to an account',
  'email-not-verified': 'The identity provider has not verified this email address (email_verified must be true)',
  'password-account':
    'An account with this email signs in with a password; sign in with it and link this identity at POST /v3/auth/me/identities',
} as const;

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Headers an answer may carry that a refused credential must not see, or that belong to the answer
 * it replaces: the rate limits' (the company's budgets), and what the deferring routes set.
 */
const REFUSAL_DROPS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'retry-after',
  'content-encoding',
  'idempotent-replayed',
  'location',
  'vary',
  'content-length',
];

function defaultAccess(url: string | undefined): Access {
  if (url?.startsWith('/v3/public/')) return { mode: 'public' };
  if (url?.startsWith('/v3/')) return { mode: 'company' };
  return { mode: 'none' };
}

export function accessOf(request: FastifyRequest): Access {
  return request.routeOptions.config?.access ?? defaultAccess(request.routeOptions.url);
}

function readBearer(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Missing Authorization header');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Authorization header must be "Bearer <token>"');
  return match[1]!;
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `https://Booking.Example.com:8443` → `booking.example.com:8443`; null when not an https origin
 * (or http, with `allowHttp`: a page served over http can be changed by anyone on its network).
 */
export function originHost(origin: string, allowHttp = false): string | null {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return null;
    return url.host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Browsers send no Origin on a same-origin GET, so the hosted booking page (/book/:publicClientId,
 * on this server's own origin) would be refused. They do send `Sec-Fetch-Site: same-origin`, which
 * no page script can set (a forbidden header): the request then comes from a page of this origin,
 * and that origin is checked against allowedDomains like any other. A non-browser client can forge
 * this header, as it can forge Origin: the check only ever stopped other sites' pages.
 */
function sameOriginPage(request: FastifyRequest): string | undefined {
  if (singleHeader(request, 'sec-fetch-site') !== 'same-origin') return undefined;
  return `${request.protocol}://${request.host}`;
}

export interface AuthenticationDeps {
  tokens: TokenService;
  principals: PrincipalRepository;
  /** Accept http:// origins on public routes (PUBLIC_ALLOW_HTTP_ORIGINS; development only). */
  publicHttpOrigins?: boolean;
}

/** What a valid machine token may not do here: its scope, and routes for dashboard users only. */
function machineRefusal(method: string, access: Exclude<Access, { mode: 'none' | 'public' | 'manage' }>, scopes: readonly string[]): ApiError | null {
  // A write token may read; a read token may not write.
  if (READ_METHODS.has(method)) {
    if (!scopes.includes('read') && !scopes.includes('write')) return forbidden('Insufficient scope: read required');
  } else if (!scopes.includes('write')) {
    return forbidden('Insufficient scope: write required');
  }
  if (access.mode === 'user') return forbidden(access.machineMessage ?? 'This operation requires a dashboard user');
  if (access.mode === 'company' && access.machineMessage) return forbidden(access.machineMessage);
  return null;
}

export function createAuthenticator({ tokens, principals, publicHttpOrigins = false }: AuthenticationDeps) {
  async function publicPrincipal(request: FastifyRequest): Promise<Principal> {
    const clientId = singleHeader(request, 'x-client-id');
    if (!clientId) throw unauthorized(INVALID_CLIENT_ID_MESSAGE);
    const company = await principals.companyByPublicClientId(clientId);
    if (!company) throw unauthorized(INVALID_CLIENT_ID_MESSAGE);
    if (company.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
    const origin = singleHeader(request, 'origin') ?? sameOriginPage(request);
    if (!origin) throw forbidden('Origin header is required on public routes');
    const host = originHost(origin, publicHttpOrigins);
    if (!host || !company.allowedDomains.includes(host)) {
      throw forbidden(originHost(origin, true) && !host ? 'Origin must be https' : 'Origin is not an allowed domain of this company');
    }
    return { kind: 'public', companyId: company.id, origin };
  }

  /** A manage-link token, and nothing else: the customer's handle on one appointment. */
  async function managePrincipal(request: FastifyRequest): Promise<Principal> {
    let claims;
    try {
      claims = await tokens.verifyManageToken(readBearer(request));
    } catch (error) {
      if (error instanceof ManageTokenError) throw unauthorized(error.message);
      throw error;
    }
    const context = await principals.manageContext(claims.companyId, claims.appointmentId);
    if (!context?.appointmentId) throw unauthorized(MANAGE_LINK_UNKNOWN_MESSAGE);
    if (context.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
    return { kind: 'manage', manage: claims };
  }

  async function bearerPrincipal(request: FastifyRequest, access: Exclude<Access, { mode: 'none' | 'public' | 'manage' }>): Promise<Principal> {
    let verified;
    try {
      verified = await tokens.verifyBearer(readBearer(request));
    } catch (error) {
      if (error instanceof TokenError) throw unauthorized(error.message);
      throw error;
    }

    if (verified.kind === 'docs') throw unauthorized(DOCS_TOKEN_MESSAGE);

    if (verified.kind === 'calendarSelection') {
      if (access.mode !== 'company' || !access.calendarSelection) throw unauthorized(CALENDAR_SELECTION_TOKEN_MESSAGE);
      // A disconnected connection's token stops at once; a suspended company's too, as every credential.
      const context = await principals.calendarSelectionContext(verified.claims.companyId, verified.claims.connectionId);
      if (!context?.connectionId) throw unauthorized('Invalid or expired token');
      if (context.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
      return { kind: 'calendarSelection', selection: verified.claims };
    }

    if (verified.kind === 'machine') {
      const { companyId, clientId, scopes } = verified.claims;
      const refusal = machineRefusal(request.method, access, scopes);
      // No refusal of the token's own: the check may ride along with the route's first statement
      // (credential-check.ts); the onSend hook below settles it if the route never does.
      if (!refusal && access.mode === 'company' && access.deferCredentialCheck) {
        return { kind: 'machine', companyId, clientId, scopes, credentialCheck: { state: 'pending' } };
      }
      // The credential's own answers first, so a revoked token is 401 and a read token writing is
      // told its scope is missing (Machine flow 5) wherever it writes.
      assertMachineContext(await principals.machineContext(companyId, clientId));
      if (refusal) throw refusal;
      return { kind: 'machine', companyId, clientId, scopes };
    }

    let userId: string;
    if (verified.kind === 'oidc') {
      const match = await principals.userForExternalIdentity(verified);
      if (match.kind === 'refused') throw unauthorized(OIDC_REFUSALS[match.reason]);
      userId = match.userId;
    } else {
      userId = verified.claims.userId;
      // A password change bumps the user's version: every token issued before it stops here.
      const user = await principals.userTokenVersion(userId);
      if (!user || user.tokenVersion !== verified.claims.tokenVersion) throw unauthorized('Invalid or expired token');
    }
    if (access.mode === 'user' || access.mode === 'userOrMachine') return { kind: 'user', userId };

    const apiKey = singleHeader(request, 'x-api-key');
    if (!apiKey) throw unauthorized('Missing x-api-key header');
    const company = await principals.companyByApiKeyHash(sha256(apiKey));
    if (!company) throw unauthorized('Invalid API key');
    const membership = await principals.membership(company.id, userId);
    if (!membership) throw forbidden(USER_NOT_ASSOCIATED_MESSAGE);
    if (company.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
    if (access.roles && !access.roles.includes(membership.role)) {
      throw forbidden(`Insufficient role: requires ${access.roles.join(' or ')}`);
    }
    return { kind: 'dashboard', companyId: company.id, userId, ...membership };
  }

  return async function authenticate(request: FastifyRequest): Promise<void> {
    const access = accessOf(request);
    if (access.mode === 'none') return;
    if (access.mode === 'public') request.principal = await publicPrincipal(request);
    else if (access.mode === 'manage') request.principal = await managePrincipal(request);
    else request.principal = await bearerPrincipal(request, access);
  };
}

export function registerAuthentication(app: FastifyInstance, deps: AuthenticationDeps): void {
  app.decorateRequest('principal', null);
  const authenticate = createAuthenticator(deps);
  app.addHook('onRequest', authenticate);

  // A machine caller's deferred check that the route never settled (a 400 before its statement, an
  // unknown id, a stored Idempotency-Key answer): read now, and a bad credential replaces the answer
  // with the 401 or 403 the check of its own would have given (credential-check.ts). A refused
  // caller is not shown the company's rate-limit budgets, as the check of its own came before them.
  app.addHook('onSend', async (request, reply, payload) => {
    const principal = request.principal;
    if (principal?.kind !== 'machine') return payload;
    const check = principal.credentialCheck;
    if (!check || check.state === 'passed' || check.state === 'checking') return payload;
    if (check.state === 'failed') {
      for (const name of REFUSAL_DROPS) reply.removeHeader(name);
      return payload;
    }
    // Once: an answer from here passes through onSend again.
    check.state = 'checking';
    // An answer of 500 or more carries nothing of the company's.
    if (reply.statusCode >= 500) return payload;
    try {
      assertMachineContext(await deps.principals.machineContext(principal.companyId, principal.clientId));
      check.state = 'passed';
      return payload;
    } catch (error) {
      if (error instanceof ApiError) check.state = 'failed';
      // Fastify has already used the error handler for an answer that is an error: the one
      // handler's answer (errorAnswer) is made and sent from here.
      const answer = errorAnswer(error as FastifyError & Partial<ApiError>, request);
      for (const name of REFUSAL_DROPS) reply.removeHeader(name);
      for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
      reply.code(answer.status).type('application/json; charset=utf-8');
      return JSON.stringify(answer.body);
    }
  });

  // Public booking pages call from browsers: answer CORS preflights, and let the allowed origin
  // read the answers. A preflight carries no x-client-id, so it is answered for an origin that
  // some company allows; the real request is still checked against its company's domains.
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.principal?.kind === 'public') {
      reply.header('access-control-allow-origin', request.principal.origin);
      reply.header('vary', 'Origin');
    }
    return payload;
  });
  app.options('/v3/public/*', { config: { access: { mode: 'none' } }, schema: { hide: true } }, async (request, reply) => {
    const origin = singleHeader(request, 'origin');
    reply.header('vary', 'Origin');
    const host = origin ? originHost(origin, deps.publicHttpOrigins) : null;
    if (!origin || !host || !(await deps.principals.isAllowedDomainAnywhere(host))) return reply.status(204).send();
    reply.header('access-control-allow-origin', origin);
    return reply
      .header('access-control-allow-methods', 'GET, POST, PUT, OPTIONS')
      .header('access-control-allow-headers', 'x-client-id, content-type')
      .header('access-control-max-age', '600')
      .status(204)
      .send();
  });
}
