import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { IANAZone } from 'luxon';
import { validationError } from './errors.js';
import { compiledOncePerProcess, validatorOnFirstUse } from './http/lazy-schemas.js';

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
  // ajv-formats' uuid also takes a 'urn:uuid:' prefix, which PostgreSQL's uuid type refuses: such
  // an id passed validation and failed in the database (a 500). The hyphenated form only, either case.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('iana-timezone', { type: 'string', validate: (value: string) => IANAZone.isValidZone(value) });
  return ajv;
}

/** A validator of JSON bodies exactly as routes check them (for bodies built inside the service, such as the v1 importer's). */
export const createBodyAjv = (): Ajv => makeAjv(false);

/**
 * JSON bodies are validated as sent: a string is never turned into a number or a boolean. Query
 * strings, path parameters and headers only ever arrive as text, so there the declared types are
 * coerced (and a repeated query parameter may fill an array).
 */
export function registerValidation(app: FastifyInstance, options: { compileOnFirstUse?: boolean } = {}): void {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv('array');
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    // Tests build the whole app for a few routes, and many apps in one process: compiled on first
    // use, once per process for the same schema and Ajv settings (platform/http/lazy-schemas.ts).
    return options.compileOnFirstUse
      ? validatorOnFirstUse(() => compiledOncePerProcess(httpPart === 'body' ? 'ajv body' : 'ajv text', schema, () => ajv.compile(schema)))
      : ajv.compile(schema);
  });
  // A request without a body is validated as an empty object, so a missing required field is
  // reported by name, and a route whose fields are all optional needs no body at all.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
    for (const [location, value] of [['body', request.body], ['query', request.query], ['params', request.params]] as const) {
      const problem = textProblem(value);
      if (problem) {
        const path = problem.path.join('.');
        throw validationError(location, path, `${path || location} ${problem.msg}`);
      }
    }
  });
}

/**
 * One policy for text in any string of a request (keys included): U+0000 (PostgreSQL text cannot
 * hold it), an unpaired UTF-16 surrogate such as "\udfff" (not Unicode text at all: PostgreSQL's
 * jsonb refuses it, other columns would get U+FFFD silently) and the Unicode noncharacters
 * (U+FDD0..U+FDEF and U+xFFFE/U+xFFFF, never meant for interchange). Each is a 400 naming the field.
 * With the u flag a well-formed surrogate pair is one code point, so \p{Cs} matches only lone halves.
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what is looked for
const FORBIDDEN_TEXT = /[\u0000\p{Cs}\p{Noncharacter_Code_Point}]/u;

function describe(text: string): string {
  const match = FORBIDDEN_TEXT.exec(text)![0];
  const code = match.codePointAt(0)!;
  if (code === 0) return 'must not contain the NUL character';
  const hex = code.toString(16).toUpperCase().padStart(4, '0');
  if (code >= 0xd800 && code <= 0xdfff) return `must be valid Unicode text: it contains an unpaired surrogate (U+${hex})`;
  return `must not contain the Unicode noncharacter U+${hex}`;
}

/**
 * The first string (or key) breaking that policy, with its path. A walk with an explicit stack,
 * never recursion: a request's depth must not decide the depth of our call stack.
 */
export function textProblem(root: unknown): { path: string[]; msg: string } | null {
  // Each entry points at its parent, so the path is built only for the one field reported.
  interface Entry { value: unknown; key: string; parent: Entry | null }
  const pathOf = (entry: Entry | null): string[] => {
    const path: string[] = [];
    for (let e = entry; e && e.parent; e = e.parent) path.push(e.key);
    return path.reverse();
  };
  const stack: Entry[] = [{ value: root, key: '', parent: null }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const { value } = entry;
    if (typeof value === 'string') {
      if (FORBIDDEN_TEXT.test(value)) return { path: pathOf(entry), msg: describe(value) };
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      // Pushed in reverse so the first field is looked at first (the error names the first problem).
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, inner] = entries[i]!;
        const child: Entry = { value: inner, key, parent: entry };
        if (FORBIDDEN_TEXT.test(key)) return { path: pathOf(child), msg: `has a field name that ${describe(key)}` };
        stack.push(child);
      }
    }
  }
  return null;
}

/**
 * True when JSON text nests arrays and objects deeper than `max`. A single pass over the text with
 * a counter, before JSON.parse and before anything else looks at the body: a body nested
 * thousands deep costs one linear scan and a 400, not a parse and a walk.
 */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) {
      inString = true;
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) {
      depth--;
    }
  }
  return false;
}
