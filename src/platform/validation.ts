import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { IANAZone } from 'luxon';

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
  });
}
