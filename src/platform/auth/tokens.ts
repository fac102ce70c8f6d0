import { randomUUID } from 'node:crypto';
import { SignJWT, createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import type { OidcConfig } from '../config.js';
import type { Secrets } from '../secrets.js';

/**
 * Every token this service issues is an HS256 JWT. Kinds are told apart by audience and
 * `token_use`, and refresh tokens use a secret of their own, so a token of one kind can never
 * pass where another is required.
 *
 * | kind      | aud       | token_use | secret               | life              |
 * |-----------|-----------|-----------|----------------------|-------------------|
 * | machine   | api       | (none: the specification's claims only) | AUTH_TOKEN_SECRET | 1 hour |
 * | dashboard | dashboard | dashboard | AUTH_TOKEN_SECRET    | DASHBOARD_TOKEN_TTL_SECONDS |
 * | docs      | docs      | docs      | AUTH_TOKEN_SECRET    | DOCS_TOKEN_TTL_SECONDS |
 * | refresh   | refresh   | refresh   | REFRESH_TOKEN_SECRET | REFRESH_TOKEN_TTL_SECONDS |
 * | calendar selection | calendar-selection | calendar_selection | CALENDAR_TOKEN_SECRET | 15 minutes |
 * | OAuth state (not a Bearer) | calendar-oauth-state | oauth_state | CALENDAR_TOKEN_SECRET | 15 minutes |
 * | manage link | manage | manage | MANAGE_TOKEN_SECRET | until a day after the appointment ends |
 */
export const TOKEN_ISSUER = 'service:v3-api';
export const MACHINE_AUDIENCE = 'api';
const ALGORITHMS = ['HS256'];
const MAX_REMEMBERED_BEARERS = 10_000;

export type Scope = 'read' | 'write';

export interface MachineClaims {
  companyId: string;
  clientId: string;
  scopes: Scope[];
}

export interface DashboardClaims {
  userId: string;
  /** The user's token version when the token was issued; a password change bumps it. */
  tokenVersion: number;
}

export interface RefreshClaims {
  userId: string;
  companyId: string;
  tokenId: string;
  familyId: string;
}

export interface DocsClaims {
  companyId: string;
}

/** Calendar Selection Token: list, select and disconnect of one connection's resource only. */
export interface CalendarSelectionClaims {
  companyId: string;
  resourceId: string;
  connectionId: string;
}

/** The signed `state` of an external calendar OAuth dance; `nonce` makes it single-use. */
export interface OAuthStateClaims {
  companyId: string;
  resourceId: string;
  connectionId: string;
  nonce: string;
}

/** A customer's manage link: one appointment of one company (modules/manage). */
export interface ManageClaims {
  companyId: string;
  appointmentId: string;
}

/** A manage link opens its appointment until this long after the appointment's end (docs/api.md, Customer self-service). */
export const MANAGE_TOKEN_GRACE_SECONDS = 86_400;

/** Why a manage token was refused: `expired` is told apart so the page can say so. */
export class ManageTokenError extends Error {
  constructor(readonly reason: 'invalid' | 'expired') {
    super(reason === 'expired' ? 'This manage link has expired: the appointment is over' : 'Invalid manage link: it is not one this service issued, or it was altered');
  }
}

/** Calendar Selection Token lifetime (specification: about 15 minutes). */
export const CALENDAR_SELECTION_TTL_SECONDS = 900;
/** An OAuth `state` is good for 15 minutes (decisions.md, External calendars). */
export const OAUTH_STATE_TTL_SECONDS = 900;

export type VerifiedBearer =
  | { kind: 'machine'; claims: MachineClaims }
  | { kind: 'dashboard'; claims: DashboardClaims }
  | { kind: 'docs'; claims: DocsClaims }
  | { kind: 'calendarSelection'; claims: CalendarSelectionClaims }
  | { kind: 'oidc'; issuer: string; subject: string; email: string | undefined; emailVerified: boolean; name: string | undefined };

export class TokenError extends Error {}

export interface TokenTtls {
  machineTokenTtlSeconds: number;
  dashboardTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  docsTokenTtlSeconds: number;
}

export function createTokenService(secrets: Secrets, ttls: TokenTtls, oidc?: OidcConfig) {
  const authKey = new TextEncoder().encode(secrets.AUTH_TOKEN_SECRET);
  /**
   * This service's bearer tokens whose signature and claims were verified, with what they grant,
   * until they expire: a client sends the same token on every request for an hour, and the HMAC
   * check through WebCrypto cost about half a millisecond of each (issue 18). A token is a fixed
   * string, so the answer cannot change before `exp`; revocation is checked per request after this
   * (platform/auth/authenticate.ts). Bounded: emptied when full.
   */
  const verifiedBearers = new Map<string, { answer: VerifiedBearer; expiresAtMs: number }>();
  const remember = (token: string, answer: VerifiedBearer, exp: number | undefined) => {
    if (exp === undefined) return;
    if (verifiedBearers.size >= MAX_REMEMBERED_BEARERS) verifiedBearers.clear();
    // Shared by every request that sends the token: frozen, so none can change it for the next.
    if ('claims' in answer) {
      Object.freeze(answer.claims);
      if ('scopes' in answer.claims) Object.freeze(answer.claims.scopes);
    }
    verifiedBearers.set(token, { answer: Object.freeze(answer), expiresAtMs: exp * 1000 });
  };
  const refreshKey = new TextEncoder().encode(secrets.REFRESH_TOKEN_SECRET);
  // Its own secret, managed by the service (secrets.ts): a leak of one kind's key forges no other.
  const calendarKey = new TextEncoder().encode(secrets.CALENDAR_TOKEN_SECRET);
  const manageKey = new TextEncoder().encode(secrets.MANAGE_TOKEN_SECRET);
  const oidcKeys = oidc ? createRemoteJWKSet(new URL(oidc.jwksUrl)) : undefined;

  function sign(payload: JWTPayload, audience: string, ttlSeconds: number, key: Uint8Array, subject?: string) {
    const jwt = new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(audience)
      .setIssuedAt()
      .setJti(typeof payload.jti === 'string' ? payload.jti : randomUUID())
      .setExpirationTime(`${ttlSeconds}s`);
    if (subject) jwt.setSubject(subject);
    return jwt.sign(key);
  }

  return {
    ttls,

    signMachineToken(claims: MachineClaims): Promise<string> {
      return sign(
        {
          company_id: claims.companyId,
          grant_type: 'client_credentials',
          scope: claims.scopes.join(' '),
          client_id: claims.clientId,
        },
        MACHINE_AUDIENCE,
        ttls.machineTokenTtlSeconds,
        authKey,
      );
    },

    signDashboardToken(claims: DashboardClaims): Promise<string> {
      return sign({ token_use: 'dashboard', ver: claims.tokenVersion }, 'dashboard', ttls.dashboardTokenTtlSeconds, authKey, claims.userId);
    },

    signDocsToken(claims: DocsClaims): Promise<string> {
      return sign({ token_use: 'docs', company_id: claims.companyId }, 'docs', ttls.docsTokenTtlSeconds, authKey);
    },

    signRefreshToken(claims: RefreshClaims): Promise<string> {
      return sign(
        { token_use: 'refresh', company_id: claims.companyId, fam: claims.familyId, jti: claims.tokenId },
        'refresh',
        ttls.refreshTokenTtlSeconds,
        refreshKey,
        claims.userId,
      );
    },

    signCalendarSelectionToken(claims: CalendarSelectionClaims): Promise<string> {
      return sign(
        { token_use: 'calendar_selection', company_id: claims.companyId, resource_id: claims.resourceId, connection_id: claims.connectionId },
        'calendar-selection',
        CALENDAR_SELECTION_TTL_SECONDS,
        calendarKey,
      );
    },

    signOAuthState(claims: OAuthStateClaims): Promise<string> {
      return sign(
        { token_use: 'oauth_state', company_id: claims.companyId, resource_id: claims.resourceId, connection_id: claims.connectionId, nonce: claims.nonce },
        'calendar-oauth-state',
        OAUTH_STATE_TTL_SECONDS,
        calendarKey,
      );
    },

    /** A manage-link token; it expires MANAGE_TOKEN_GRACE_SECONDS after `endsAt` (the appointment's end). */
    signManageToken(claims: ManageClaims, endsAt: Date): Promise<string> {
      return new SignJWT({ token_use: 'manage', company_id: claims.companyId, appointment_id: claims.appointmentId })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience('manage')
        .setIssuedAt()
        .setExpirationTime(Math.floor(endsAt.getTime() / 1000) + MANAGE_TOKEN_GRACE_SECONDS)
        .sign(manageKey);
    },

    /** Throws ManageTokenError when the token is forged, altered, expired or not a manage token. */
    async verifyManageToken(token: string): Promise<ManageClaims> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, manageKey, { issuer: TOKEN_ISSUER, audience: 'manage', algorithms: ALGORITHMS }));
      } catch (error) {
        // Only a token whose signature held can be told it expired; jose checks the signature first.
        throw new ManageTokenError(error instanceof Error && (error as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid');
      }
      const { company_id: companyId, appointment_id: appointmentId } = payload;
      if (payload.token_use !== 'manage' || typeof companyId !== 'string' || typeof appointmentId !== 'string') throw new ManageTokenError('invalid');
      return { companyId, appointmentId };
    },

    /** Throws TokenError when the state is forged, expired or not a state. Single use is the caller's (the nonce). */
    async verifyOAuthState(state: string): Promise<OAuthStateClaims> {
      try {
        const { payload } = await jwtVerify(state, calendarKey, { issuer: TOKEN_ISSUER, audience: 'calendar-oauth-state', algorithms: ALGORITHMS });
        const { company_id: companyId, resource_id: resourceId, connection_id: connectionId, nonce } = payload;
        if (payload.token_use !== 'oauth_state' || typeof companyId !== 'string' || typeof resourceId !== 'string' || typeof connectionId !== 'string' || typeof nonce !== 'string') {
          throw new TokenError('Invalid state');
        }
        return { companyId, resourceId, connectionId, nonce };
      } catch {
        throw new TokenError('Invalid or expired state');
      }
    },

    /** Verifies any Bearer token and says which kind it is. Refresh tokens never verify here. */
    async verifyBearer(token: string): Promise<VerifiedBearer> {
      const known = verifiedBearers.get(token);
      if (known) {
        if (Date.now() < known.expiresAtMs) return known.answer;
        verifiedBearers.delete(token);
      }
      let unverified: JWTPayload;
      try {
        unverified = decodeJwt(token);
      } catch {
        throw new TokenError('Malformed token');
      }
      if (oidc && oidcKeys && unverified.iss === oidc.issuer) {
        try {
          const { payload } = await jwtVerify(token, oidcKeys, { issuer: oidc.issuer, audience: oidc.audience });
          if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenError('Identity token has no subject');
          return {
            kind: 'oidc',
            issuer: oidc.issuer,
            subject: payload.sub,
            email: typeof payload.email === 'string' ? payload.email : undefined,
            // Only a literal true counts: a missing claim or the string "true" proves nothing.
            emailVerified: payload.email_verified === true,
            name: typeof payload.name === 'string' ? payload.name : undefined,
          };
        } catch (error) {
          throw error instanceof TokenError ? error : new TokenError('Invalid or expired token');
        }
      }
      if (unverified.token_use === 'refresh') {
        throw new TokenError('A refresh token cannot be used as a Bearer token; exchange it at POST /v3/auth/token');
      }
      if (unverified.token_use === 'manage') {
        throw new TokenError('A manage link token opens only its own appointment, at /v3/manage/*');
      }
      if (unverified.token_use === 'calendar_selection') {
        try {
          const { payload } = await jwtVerify(token, calendarKey, { issuer: TOKEN_ISSUER, audience: 'calendar-selection', algorithms: ALGORITHMS });
          const { company_id: companyId, resource_id: resourceId, connection_id: connectionId } = payload;
          if (payload.token_use === 'calendar_selection' && typeof companyId === 'string' && typeof resourceId === 'string' && typeof connectionId === 'string') {
            return { kind: 'calendarSelection', claims: { companyId, resourceId, connectionId } };
          }
        } catch {
          // falls through to the one refusal below
        }
        throw new TokenError('Invalid or expired Calendar Selection Token');
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, authKey, {
          issuer: TOKEN_ISSUER,
          audience: [MACHINE_AUDIENCE, 'dashboard', 'docs'],
          algorithms: ALGORITHMS,
        }));
      } catch {
        throw new TokenError('Invalid or expired token');
      }
      const answer = ownBearer(payload);
      remember(token, answer, payload.exp);
      return answer;
    },

    async verifyRefreshToken(token: string): Promise<RefreshClaims> {
      try {
        const { payload } = await jwtVerify(token, refreshKey, {
          issuer: TOKEN_ISSUER,
          audience: 'refresh',
          algorithms: ALGORITHMS,
        });
        if (
          payload.token_use !== 'refresh' ||
          typeof payload.sub !== 'string' ||
          typeof payload.company_id !== 'string' ||
          typeof payload.jti !== 'string' ||
          typeof payload.fam !== 'string'
        ) {
          throw new TokenError('Invalid or expired refresh token');
        }
        return { userId: payload.sub, companyId: payload.company_id, tokenId: payload.jti, familyId: payload.fam };
      } catch {
        throw new TokenError('Invalid or expired refresh token');
      }
    },
  };
}

/** What a bearer token of this service (machine, dashboard or docs), its signature verified, grants. */
function ownBearer(payload: JWTPayload): VerifiedBearer {
  const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if (audience.length !== 1) throw new TokenError('Invalid or expired token');
  if (audience[0] === MACHINE_AUDIENCE && payload.grant_type === 'client_credentials' && payload.token_use === undefined) {
    const scopes = String(payload.scope ?? '')
      .split(' ')
      .filter((s): s is Scope => s === 'read' || s === 'write');
    if (typeof payload.company_id !== 'string' || typeof payload.client_id !== 'string') {
      throw new TokenError('Invalid or expired token');
    }
    return { kind: 'machine', claims: { companyId: payload.company_id, clientId: payload.client_id, scopes } };
  }
  if (audience[0] === 'dashboard' && payload.token_use === 'dashboard' && typeof payload.sub === 'string') {
    // Tokens issued before versions existed carry none: they count as version 0.
    const tokenVersion = payload.ver === undefined ? 0 : payload.ver;
    if (typeof tokenVersion !== 'number' || !Number.isInteger(tokenVersion)) throw new TokenError('Invalid or expired token');
    return { kind: 'dashboard', claims: { userId: payload.sub, tokenVersion } };
  }
  if (audience[0] === 'docs' && payload.token_use === 'docs' && typeof payload.company_id === 'string') {
    return { kind: 'docs', claims: { companyId: payload.company_id } };
  }
  throw new TokenError('Invalid or expired token');
}

export type TokenService = ReturnType<typeof createTokenService>;
