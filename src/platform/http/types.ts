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
export function sendJsonText(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/**
 * JSON text given in parts, as one UTF-8 buffer to send. Joined with +, a long text is a rope
 * that Fastify's Buffer.byteLength flattens, a copy on the JavaScript heap, before the socket
 * encodes it to bytes again: for a cursor page of 100 appointments (about 80 KB, nearly all of it
 * the one part PostgreSQL built) that copy was a third of what the page left for the garbage
 * collector (issue 18).
 */
export function jsonBytes(parts: readonly string[]): Buffer {
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part);
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const part of parts) at += bytes.write(part, at);
  return bytes;
}
