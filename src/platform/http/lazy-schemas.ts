import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Schema compilation on first use, for processes that build an app and use few of its routes
 * (a test file builds the whole app to call a handful): Fastify compiles every route's validators
 * (Ajv) and response serializers (fast-json-stringify) when the app gets ready, which is most of
 * the time it takes to build. The compiled functions are the same either way; only when they are
 * made differs. The server (src/server.ts) compiles eagerly, so a schema that cannot compile stops
 * it at start instead of failing a route's first request.
 */

/** Calls `compile` on the first call of the returned function and delegates to its result after. */
export function compiledOnFirstUse<A extends unknown[], R>(compile: () => (...args: A) => R): (...args: A) => R {
  let compiled: ((...args: A) => R) | undefined;
  return (...args) => (compiled ??= compile())(...args);
}

/** An Ajv validate function made on first use; Fastify reads `errors` off the function it was given. */
export function validatorOnFirstUse<F extends ((data: unknown) => unknown) & { errors?: unknown }>(compile: () => F): F {
  let compiled: F | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const result = compiled(data);
    validate.errors = compiled.errors;
    return result;
  }) as F;
  return validate;
}

/** Fastify's own serializer factory (the one it uses by default), each route's serializer made on first use. */
export const lazySchemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = SerializerSelector()(externalSchemas, options as Parameters<ReturnType<typeof SerializerSelector>>[1]);
      return (route: Parameters<ReturnType<ReturnType<typeof SerializerSelector>>>[0]) => compiledOnFirstUse(() => compile(route));
    },
  },
};
