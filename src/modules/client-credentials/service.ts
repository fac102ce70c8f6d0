import { randomUUID } from 'node:crypto';
import { randomToken, safeEqual, sha256 } from '../../platform/crypto.js';
import { ApiError, badRequest, forbidden, unauthorized } from '../../platform/errors.js';
import { SUSPENDED_MESSAGE } from '../../platform/auth/authenticate.js';
import type { Scope, TokenService } from '../../platform/auth/tokens.js';
import type { ClientCredentialRepository } from './repository.js';
import type { TokenRequest } from './schemas.js';
import { pageOf, pageWindow } from '../catalog/graph.js';

export const INVALID_SCOPE_MESSAGE = 'Invalid OAuth scope';
const INVALID_CLIENT_MESSAGE = 'Invalid client credentials';

/** Machine flow 4: read and write only; omitted or blank means both; any unknown word fails all. */
export function parseScope(scope: string | undefined): Scope[] | null {
  const words = (scope ?? '').split(/[\s]+/).filter(Boolean);
  if (words.length === 0) return ['read', 'write'];
  const scopes = new Set<Scope>();
  for (const word of words) {
    if (word !== 'read' && word !== 'write') return null;
    scopes.add(word);
  }
  return (['read', 'write'] as const).filter((s) => scopes.has(s));
}

/**
 * Reads `Authorization: Basic base64(client_id:client_secret)` (RFC 6749 2.3.1: each part
 * form-urlencoded). Returns undefined when there is no Authorization header.
 */
export function parseBasicAuth(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) {
    if (/^Bearer\s/i.test(header)) throw unauthorized('The token request takes client credentials, not a Bearer token');
    throw unauthorized('Malformed Basic authorization header');
  }
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw unauthorized('Malformed Basic authorization header');
  try {
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
  } catch {
    throw unauthorized('Malformed Basic authorization header');
  }
}

export function createClientCredentialService({
  repository,
  tokens,
}: {
  repository: Pick<ClientCredentialRepository, 'insert' | 'page' | 'revoke' | 'byClientId' | 'touch'>;
  tokens: Pick<TokenService, 'signMachineToken' | 'ttls'>;
}) {
  function view(row: { id: string; clientId: string; name: string | null; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null }) {
    return {
      id: row.id,
      clientId: row.clientId,
      name: row.name,
      createdAt: row.createdAt.toISOString(),
      lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
      revokedAt: row.revokedAt?.toISOString() ?? null,
    };
  }

  return {
    async create(companyId: string, createdByUserId: string | null, name: string | undefined) {
      const clientSecret = randomToken('cs');
      const row = await repository.insert({
        companyId,
        id: randomUUID(),
        clientId: randomToken('cid', 16),
        secretHash: sha256(clientSecret),
        name: name ?? null,
        createdByUserId,
      });
      // The only time the secret is shown.
      return { ...view(row), clientSecret };
    },

    async list(companyId: string, query: { limit: number; page: number }) {
      const { rows, total } = await repository.page(companyId, pageWindow(query));
      return pageOf(rows.map(view), query.page, query.limit, total);
    },

    async revoke(companyId: string, id: string) {
      if (!(await repository.revoke(companyId, id))) throw new ApiError(404, 'Client id not found', [], 'COMPANY-101');
    },

    /** POST /v3/oauth/token: the client credentials grant (Machine flow 2 to 4 and 9). */
    async issueToken(request: TokenRequest, authorizationHeader: string | undefined) {
      const basic = parseBasicAuth(authorizationHeader);
      if (request.grant_type !== 'client_credentials') {
        throw badRequest('Unsupported grant_type: only client_credentials is allowed');
      }
      let clientId = request.client_id;
      let clientSecret = request.client_secret;
      if (basic) {
        if ((clientId !== undefined && clientId !== basic.clientId) || (clientSecret !== undefined && clientSecret !== basic.clientSecret)) {
          throw unauthorized('Client credentials in the body differ from those in the Basic header');
        }
        clientId = basic.clientId;
        clientSecret = basic.clientSecret;
      }
      if (!clientId || !clientSecret) throw unauthorized(INVALID_CLIENT_MESSAGE);

      const credential = await repository.byClientId(clientId);
      const secretMatches = credential !== undefined && safeEqual(credential.secretHash, sha256(clientSecret));
      if (!credential || !secretMatches || credential.revokedAt) throw unauthorized(INVALID_CLIENT_MESSAGE);
      if (credential.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);

      const scopes = parseScope(request.scope);
      if (!scopes) throw badRequest(INVALID_SCOPE_MESSAGE);

      await repository.touch(credential.companyId, credential.id);
      return {
        access_token: await tokens.signMachineToken({ companyId: credential.companyId, clientId: credential.clientId, scopes }),
        token_type: 'Bearer' as const,
        expires_in: tokens.ttls.machineTokenTtlSeconds,
        scope: scopes.join(' '),
      };
    },
  };
}

export type ClientCredentialService = ReturnType<typeof createClientCredentialService>;
