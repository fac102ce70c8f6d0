import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The Fastify instance every module registers its routes on, typed by the TypeBox provider. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The address clients use to reach this service: PUBLIC_BASE_URL, else what the request says. */
export function baseUrlOf(request: FastifyRequest, configured: string | undefined): string {
  if (configured) return configured.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

/**
 * Sends JSON text that is already the answer (built by PostgreSQL, or cached as text) as it is:
 * Fastify does not serialise a string payload of a JSON type again. The route's response schema
 * still documents the shape; the code that builds the text keeps to it (and a test compares).
 */
export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
