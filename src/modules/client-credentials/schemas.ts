import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { PageQueryFields, Uuid } from '../../platform/http/schemas.js';

export const ClientCredential = Type.Object(
  {
    id: Uuid({ description: 'Record id, used to revoke' }),
    clientId: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ClientCredential' },
);

/** The answer to a create: the only one that carries the secret. */
export const CreatedClientCredential = Type.Object({
  ...ClientCredential.properties,
  clientSecret: Type.String({ description: 'Shown once; only a hash is kept' }),
});

export const ClientCredentialCreateBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: false });
export const ClientCredentialListQuery = Type.Object(PageQueryFields(100));

/** POST /v3/oauth/token: credentials in the body, or in an HTTP Basic header. */
export const TokenRequestBody = Type.Object({
  grant_type: Type.String({ description: 'client_credentials' }),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: 200 })),
});

export const TokenAnswer = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  scope: Type.String(),
});

export type TokenRequest = Static<typeof TokenRequestBody>;
