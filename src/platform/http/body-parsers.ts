import formbody from '@fastify/formbody';
import { validationError } from '../errors.js';
import { jsonNestingExceeds } from '../validation.js';
import { parseFormBody } from './form-body.js';
import type { App } from './types.js';

/** The JSON parser (strict UTF-8, a nesting limit, an empty body is no body) and the form parser. */
export async function registerBodyParsers(app: App, config: { jsonMaxDepth: number }): Promise<void> {
  // A POST with Content-Type: application/json and no body (curl -X POST -H ...) is not an error.
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  // Bytes, decoded strictly: invalid UTF-8 is refused, never replaced with U+FFFD in silence.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    let text: string;
    try {
      text = typeof raw === 'string' ? raw : utf8.decode(raw);
    } catch {
      return done(validationError('body', '', 'request body is not valid UTF-8 text'), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    // Nesting is checked on the text, in one pass, before parsing (hostile input: issue 11).
    if (jsonNestingExceeds(text, config.jsonMaxDepth)) {
      return done(validationError('body', '', `request body nests arrays and objects more than ${config.jsonMaxDepth} levels deep; the limit is ${config.jsonMaxDepth}`), undefined);
    }
    return defaultJsonParser(request, text, done);
  });
  // Forms for OAuth token requests; a JSON text sent as a form is refused with a message that says so.
  await app.register(formbody, { parser: parseFormBody });
}
