import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isCommitOutcomeUnknown, isContention, isDatabaseUnavailable, isLockTimeout } from './database/errors.js';
import { fieldOf } from './values.js';

/**
 * The one error body of the specification: `success: false`, a human `message`, and `errors[]`
 * of field errors (`type`, `location`, `path` in dot notation, `msg`), each optionally carrying
 * the legacy catalog `code`. The HTTP status is never repeated in the body.
 */
export type ErrorLocation = 'body' | 'query' | 'params' | 'headers';

export interface FieldError {
  type: 'field';
  location: ErrorLocation;
  path: string;
  msg: string;
  code?: string;
}

export interface ErrorBody {
  success: false;
  message: string;
  errors: FieldError[];
  code?: string;
  requestId?: string;
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: 400 | 401 | 403 | 404 | 409 | 410 | 429 | 500 | 503,
    message: string,
    readonly errors: FieldError[] = [],
    readonly code?: string,
    /** Extra response headers, such as Retry-After on 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function fieldError(location: ErrorLocation, path: string, msg: string, code?: string): FieldError {
  return code ? { type: 'field', location, path, msg, code } : { type: 'field', location, path, msg };
}

export const VALIDATION_ERROR = 'Validation Error';
export const DATABASE_UNAVAILABLE = 'The service cannot reach its database right now, or it is too busy to answer in time; retry in a few seconds';
export const RECORDS_BUSY = 'The records this request changes are busy with other requests; retry in a moment';
export const DATABASE_RETRY_AFTER_SECONDS = 2;
/** The database stopped answering while a write was being committed: it may be saved. */
export const COMMIT_OUTCOME_UNKNOWN_MESSAGE =
  'The database stopped answering while this change was being committed, so it may have been saved; read it back, or retry with the same Idempotency-Key, before sending it again';

/** A 400 `Validation Error` for one field. */
export function validationError(location: ErrorLocation, path: string, msg: string, code?: string): ApiError {
  return new ApiError(400, VALIDATION_ERROR, [fieldError(location, path, msg, code)], code);
}

export function validationErrors(errors: FieldError[]): ApiError {
  return new ApiError(400, VALIDATION_ERROR, errors, errors.length === 1 ? errors[0]!.code : undefined);
}

export const badRequest = (message: string, code?: string, errors: FieldError[] = []) =>
  new ApiError(400, message, errors, code);
export const unauthorized = (message: string) => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string, errors: FieldError[] = []) => new ApiError(409, message, errors);
/** The record is gone for good (a manage link whose appointment was cancelled or moved). */
export const gone = (message: string) => new ApiError(410, message);

// --- Mapping of schema (Ajv) failures -------------------------------------------------------

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  parentSchema?: { 'x-codes'?: Record<string, string>; properties?: Record<string, { 'x-codes'?: Record<string, string> }> };
}

/**
 * A field's schema may name the legacy catalog code of each of its rules:
 * `Type.String({ maxLength: 50, 'x-codes': { maxLength: 'LOCATION-125', required: 'LOCATION-117' } })`.
 * `required` is reported on the parent object, so it is looked up on the missing property.
 */
function legacyCode(error: AjvError): string | undefined {
  if (error.keyword === 'required') {
    return error.parentSchema?.properties?.[String(error.params.missingProperty)]?.['x-codes']?.required;
  }
  return error.parentSchema?.['x-codes']?.[error.keyword];
}

const CONTEXT_LOCATION: Record<string, ErrorLocation> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

/** '/Unavailability/startTime' plus a missing property becomes 'Unavailability.startTime'. */
function ajvPath(error: AjvError): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  return segments.join('.');
}

/** What a format asks for, in words a developer can act on. */
const FORMAT_HINTS: Record<string, string> = {
  'date-time': 'must be an ISO 8601 date-time with an offset, for example 2026-11-27T10:00:00-05:00',
  date: 'must be a date as YYYY-MM-DD, for example 2026-11-27',
  'iana-timezone': 'must be an IANA time zone name, for example America/New_York',
  uuid: 'must be a UUID, for example 365ad694-db66-479f-8df0-4a6155a342ee',
  email: 'must be a valid email',
};

/** "A, B or C". */
const alternatives = (values: string[]) => (values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : values[0] ?? '');

/**
 * A `pattern` failure explained, never the regular expression itself: times, lists of names (as
 * `status=BK,RS` or `include=`), country codes; any other pattern points at the field's description.
 */
function patternMessage(subject: string, pattern: string, description: string | undefined): string {
  if (pattern.includes('[0-5][0-9]')) return `${subject} must use HH:MM, for example 09:00${pattern.includes('24:00') ? ' (24:00 ends the day)' : ''}`;
  const list = /^\^\(([\w|]+)\)\(,\(\1\)\)\*\$$/.exec(pattern);
  if (list) return `${subject} must be ${alternatives(list[1]!.split('|'))} (several separated by commas)`;
  if (pattern === '^[A-Za-z]{2}$') return `${subject} must be a two-letter ISO 3166-1 country code, for example GB`;
  return description ? `${subject} is not in the expected form: ${description}` : `${subject} is not in the expected form`;
}

function ajvMessage(error: AjvError, path: string, location: ErrorLocation): string {
  const subject = path || (location === 'body' ? 'request body' : location);
  switch (error.keyword) {
    case 'required':
      return `${subject} is required`;
    case 'additionalProperties':
      return `${subject} is not a recognised field`;
    case 'format': {
      const format = String(error.params.format);
      return `${subject} ${FORMAT_HINTS[format] ?? `must be a valid ${format}`}`;
    }
    case 'formatMinimum':
    case 'formatExclusiveMinimum':
      return `${subject} must be on or after ${String(error.params.limit)}`;
    case 'formatMaximum':
    case 'formatExclusiveMaximum':
      return `${subject} must be on or before ${String(error.params.limit)}`;
    case 'pattern': {
      // A query list (`status=BK,XX`) is one parameter to the caller, whatever its item index.
      const named = location === 'query' ? subject.replace(/\.\d+$/, '') : subject;
      const description = fieldOf(error.parentSchema, 'description');
      return patternMessage(named, String(error.params.pattern), typeof description === 'string' ? description : undefined);
    }
    case 'enum':
      return `${subject} must be one of: ${[error.params.allowedValues].flat().join(', ')}`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

export function mapSchemaErrors(validation: AjvError[], context: string): FieldError[] {
  const location = CONTEXT_LOCATION[context] ?? 'body';
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const error of validation) {
    // A failed anyOf/oneOf repeats its branches' failures; the branches already say what is wrong.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    // For a nullable field (`X or null`) that fails as X, "must be null" is noise.
    if (
      error.keyword === 'type' &&
      error.params.type === 'null' &&
      validation.some((other) => other !== error && other.keyword !== 'anyOf' && other.instancePath.startsWith(error.instancePath) && !(other.keyword === 'type' && other.params.type === 'null'))
    ) {
      continue;
    }
    const path = ajvPath(error);
    const msg = ajvMessage(error, path, location);
    const key = `${path}\u0000${msg}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(fieldError(location, path, msg, legacyCode(error)));
  }
  return errors;
}

// --- The one error handler ---------------------------------------------------------------

function send(reply: FastifyReply, status: number, body: ErrorBody, headers: Record<string, string> = {}) {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.status(status).type('application/json; charset=utf-8').send(body);
}

/** Framework errors about the shape of the request are the caller's mistake: 400, never 413/415. */
function frameworkMessage(error: FastifyError): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type; send application/json';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Body cannot be empty when Content-Type is application/json';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'Malformed request body';
    default:
      return error.message?.replace(/^FST_\w+:\s*/, '') || 'Bad Request';
  }
}

/** An error answer: its status, the specification's body and any headers it needs. */
export interface ErrorAnswer {
  status: number;
  body: ErrorBody;
  headers?: Record<string, string>;
}

/**
 * The answer to a failure, as the one error handler gives it (also for errors met after Fastify
 * has used the handler: the deferred credential check, auth/authenticate.ts): logs what is not
 * the caller's doing.
 */
export function errorAnswer(error: FastifyError & Partial<ApiError>, request: FastifyRequest): ErrorAnswer {
  if (error instanceof ApiError) {
    const body: ErrorBody = { success: false, message: error.message, errors: error.errors };
    if (error.code) body.code = error.code;
    if (error.statusCode >= 500) {
      request.log.error({ err: error }, 'request failed');
      body.requestId = request.id;
    }
    return { status: error.statusCode, body, headers: error.headers };
  }
  if (error.validation) {
    // Fastify's type leaves out parentSchema, which our Ajv compilers add (verbose: platform/validation.ts).
    const errors = mapSchemaErrors(error.validation as AjvError[], error.validationContext ?? 'body');
    const body: ErrorBody = { success: false, message: VALIDATION_ERROR, errors };
    if (errors.length === 1 && errors[0]!.code) body.code = errors[0]!.code;
    return { status: 400, body };
  }
  // The database is down, restarting, or no connection could be had in time: nothing about the
  // request was wrong, and the same request will succeed once it is back (no restart needed;
  // the pool opens fresh connections). 503 with Retry-After, never a 500.
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable');
    // An app built without metrics (some tests) has no such decorator.
    if (request.server.hasDecorator('metrics')) request.server.metrics.recordDatabaseUnavailable();
    // Lost while its commit was on the way: a plain retry could write it twice.
    const message = isCommitOutcomeUnknown(error) ? COMMIT_OUTCOME_UNKNOWN_MESSAGE : DATABASE_UNAVAILABLE;
    return { status: 503, body: { success: false, message, errors: [], requestId: request.id }, headers: { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) } };
  }
  // A lock wait past DATABASE_LOCK_TIMEOUT_MS outside a booking (bookings answer BOOKING-137),
  // or a deadlock that outlived its retries: the records are busy, the request was fine.
  if (isLockTimeout(error) || isContention(error)) {
    return { status: 409, body: { success: false, message: RECORDS_BUSY, errors: [] }, headers: { 'Retry-After': '1' } };
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    if (status === 401 || status === 403 || status === 404 || status === 429) {
      return { status, body: { success: false, message: error.message, errors: [] } };
    }
    // Malformed JSON, wrong content type, oversized body and the like: the request data is wrong.
    return { status: 400, body: { success: false, message: frameworkMessage(error), errors: [] } };
  }
  // Internals never reach the caller; the log has the cause under the same request id.
  request.log.error({ err: error }, 'unexpected error');
  return { status: 500, body: { success: false, message: 'Internal Server Error', errors: [], requestId: request.id } };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & Partial<ApiError>, request: FastifyRequest, reply: FastifyReply) => {
    const answer = errorAnswer(error, request);
    return send(reply, answer.status, answer.body, answer.headers);
  });

  app.setNotFoundHandler((request, reply) =>
    send(reply, 404, { success: false, message: `Route ${request.method} ${request.url.split('?')[0]} not found`, errors: [] }),
  );
}
