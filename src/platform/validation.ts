import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { IANAZone } from 'luxon';
import { validationError } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its function is the module's `default` property.
const addFormats = addFormatsModule.default;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    // errors carry their schema, so a field's `x-codes` can put the legacy code on the error
    verbose: true,
    strict: false,
  });
  addFormats(ajv);
  ajv.addFormat('iana-timezone', { type: 'string', validate: (value: string) => IANAZone.isValidZone(value) });
  return ajv;
}

/**
 * JSON bodies are validated as sent: a string is never turned into a number or a boolean. Query
 * strings, path parameters and headers only ever arrive as text, so there the declared types are
 * coerced (and a repeated query parameter may fill an array).
 */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema);
  });
  // A request without a body is validated as an empty object, so a missing required field is
  // reported by name, and a route whose fields are all optional needs no body at all.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    // PostgreSQL text cannot hold U+0000; a string carrying it is the caller's mistake, not a 500.
    for (const [location, value] of [['body', request.body], ['query', request.query]] as const) {
      const path = nulPath(value, []);
      if (path) throw validationError(location, path.join('.'), `${path.join('.') || location} must not contain the NUL character`);
    }
  });
}

/** The path of the first string containing U+0000, or null. */
function nulPath(value: unknown, path: string[]): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key];
      const found = nulPath(inner, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
