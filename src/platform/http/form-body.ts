import { parse } from 'fast-querystring';
import { ApiError } from '../errors.js';

export const JSON_AS_FORM_MESSAGE =
  'The body looks like JSON but was sent as application/x-www-form-urlencoded (curl -d does that); send it with Content-Type: application/json';

/**
 * The form-body parser (OAuth token requests use forms). A JSON object or array sent without
 * `Content-Type: application/json` arrives here as a form; parsed as one it would become a single
 * field named after the whole JSON text, and the caller would get misleading field errors. It gets
 * a 400 that says what happened instead.
 */
export function parseFormBody(text: string): Record<string, unknown> {
  const start = text.trimStart()[0];
  if (start === '{' || start === '[') throw new ApiError(400, JSON_AS_FORM_MESSAGE);
  return parse(text);
}
