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

/**
 * Compiled functions kept for the whole process, so that the second app a process builds (the test
 * runner runs many test files in one process, each building its own app) reuses the first one's
 * instead of compiling the same schemas again. Keyed by what the compiled code depends on: the
 * compiler's settings (`scope`) and the schema's content. Content, not identity: most route schemas
 * are built anew with each app (`Type.Null()`, `errorResponses(...)` inside route registration).
 * A schema holding anything JSON cannot spell (a function, a RegExp, a class instance, undefined in
 * a list) is compiled each time, never shared.
 */
const compiledByContent = new Map<string, unknown>();

/**
 * Content keys already made, by object: the shared schemas (`app.addSchema`) and the schemas that
 * route schemas nest are module constants, so each is spelled once per process, not once per app.
 * (Schemas are not changed once an app is built from them.) null: not plain JSON.
 */
const contentKeys = new WeakMap<object, string | null>();

/** JSON-like text that says all of `value`, or null when it holds something JSON cannot spell. */
function contentKeyOf(value: unknown): string | null {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value !== 'object') return null;
  const known = contentKeys.get(value);
  if (known !== undefined) return known;
  let key: string | null = null;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (Array.isArray(value)) {
    const parts = value.map(contentKeyOf);
    key = parts.includes(null) ? null : `[${parts.join(',')}]`;
  } else if (prototype === Object.prototype || prototype === null) {
    const parts: string[] = [];
    let plain = true;
    for (const [name, inner] of Object.entries(value)) {
      // As JSON.stringify: a field set to undefined is no field (symbol keys, TypeBox's, are not read).
      if (inner === undefined) continue;
      const innerKey = contentKeyOf(inner);
      if (innerKey === null) {
        plain = false;
        break;
      }
      parts.push(`${JSON.stringify(name)}:${innerKey}`);
    }
    key = plain ? `{${parts.join(',')}}` : null;
  }
  contentKeys.set(value, key);
  return key;
}

/** The content key of a schema, or undefined when JSON text would not say all of it. */
export function schemaContentKey(schema: unknown): string | undefined {
  return contentKeyOf(schema) ?? undefined;
}

/** `compile()` once per process for a scope and schema content; schemas without a content key compile each time. */
export function compiledOncePerProcess<F>(scope: string, schema: unknown, compile: () => F): F {
  const content = schemaContentKey(schema);
  if (content === undefined) return compile();
  const key = `${scope}\u0000${content}`;
  let compiled = compiledByContent.get(key) as F | undefined;
  if (compiled === undefined) {
    compiled = compile();
    compiledByContent.set(key, compiled);
  }
  return compiled;
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own serializer factory (the one it uses by default), each route's serializer made on
 * first use, and shared by the apps of a process: fast-json-stringify's output depends on the
 * route's schema, the shared schemas (`app.addSchema`) and the serializer options, which make the key.
 */
export const lazySchemaController: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer: (externalSchemas: unknown, options: unknown) => {
      const compile = SerializerSelector()(externalSchemas, options as Parameters<SerializerFactory>[1]);
      const context = schemaContentKey({ externalSchemas, options });
      return (route: Parameters<ReturnType<SerializerFactory>>[0]) =>
        compiledOnFirstUse(() => (context === undefined ? compile(route) : compiledOncePerProcess(`serializer ${context}`, route.schema, () => compile(route))));
    },
  },
};
