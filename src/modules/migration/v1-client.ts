/**
 * Reads a live v1 (OnSched API v1) company for the importer: OAuth client credentials, every list
 * walked through the v1 envelope, and the whole company gathered into the export document shape
 * that `{source: {type: "export"}}` takes (shared/spec/v1-source.md §1–§3, decisions.md "Migration").
 *
 * - Calls go through OutboundFetch (src/platform/outbound/fetch.ts) only: https to public addresses
 *   and a deadline on every call, as the webhook URL rules ask of any address a caller gives us.
 * - 429, 5xx, network errors and deadlines are retried with exponential backoff (Retry-After wins
 *   when sent); any other 4xx fails at once, since asking again gets the same answer.
 * - A list row that is not an object is skipped and returned in `malformed`, so one bad row is
 *   reported by the importer instead of ending the read.
 */
import type { OutboundFetch } from '../../platform/outbound/fetch.js';
import { OutboundRefusedError } from '../../platform/outbound/fetch.js';
import { parseRetryAfter } from '../../platform/outbound/retry-after.js';

/** A v1 record as the v1 API answers it; typed reading is the importer's business. */
export type V1Record = Record<string, unknown>;

/** The export document (decisions.md "Migration"): one array of v1 records per kind. */
export interface V1Export {
  locations: V1Record[];
  services: V1Record[];
  resources: V1Record[];
  serviceAllocations: V1Record[];
  resourceAllocations: V1Record[];
  resourceBlocks: V1Record[];
  customers: V1Record[];
  appointments: V1Record[];
}

export type V1Kind = keyof V1Export;

export const V1_KINDS: readonly V1Kind[] = [
  'locations',
  'services',
  'resources',
  'serviceAllocations',
  'resourceAllocations',
  'resourceBlocks',
  'customers',
  'appointments',
];

/** A list row that was skipped: its kind, its position in the walk of its list, and why. */
export interface V1Malformed {
  kind: string;
  index: number;
  reason: string;
}

export interface V1ReadResult {
  data: V1Export;
  malformed: V1Malformed[];
}

export interface V1ListResult {
  records: V1Record[];
  malformed: V1Malformed[];
}

export type V1Query = Record<string, string | number | boolean | undefined>;

export interface V1Source {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface V1ClientDeps {
  fetch: OutboundFetch;
  /** Waits between attempts; tests pass one that records the wait. */
  sleep?: (ms: number) => Promise<void>;
  /** Attempts per request, the first included (default 5). */
  maxAttempts?: number;
  /** The clock the token lifetime is measured with (default Date.now). */
  now?: () => number;
}

export interface V1Client {
  /** Every row of one v1 list (GET `path` with `query`), walking `offset += count` while `hasMore`. */
  list(path: string, query?: V1Query, kind?: string): Promise<V1ListResult>;
  /** The whole company in the export shape, with the rows that were skipped. */
  readExport(): Promise<V1ReadResult>;
}

/** A failure of the v1 source; `status` is null when no answer came (network, deadline, refused URL). */
export class V1SourceError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly path: string,
  ) {
    super(message);
    this.name = 'V1SourceError';
  }
}

/** The page size asked for: the most the v1 lists allow (v1-source.md §2). */
export const V1_PAGE_LIMIT = 100;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 10_000;
/** A Retry-After longer than this is cut to it: a run must not sleep for hours on one header. */
const RETRY_AFTER_CAP_MS = 60_000;
/** A token is fetched again this long before it expires (at most half its lifetime). */
const TOKEN_MARGIN_MS = 60_000;
/** Hard stop for one list walk: a source that keeps answering hasMore would otherwise never end. */
const MAX_PAGES = 100_000;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait before attempt `failures + 1`: 500 ms, 1 s, 2 s, … up to 10 s. */
export function backoffMs(failures: number): number {
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A readable detail from an error body (OAuth `error_description`/`error`, or a `message`), if any. */
function detailOf(text: string): string {
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body)) {
      for (const key of ['error_description', 'message', 'error', 'title']) {
        const value = body[key];
        if (typeof value === 'string' && value.trim()) return value.trim().slice(0, 300);
      }
    }
  } catch {
    // not JSON: the text itself, if short
  }
  const trimmed = text.trim();
  return trimmed.length > 0 && trimmed.length <= 300 ? trimmed : '';
}

/** A v1 id as a decimal string (ids are strings or int32 by endpoint, v1-source.md §4). */
const idOf = (record: V1Record): string | null => {
  const id = record.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
};

const emptyExport = (): V1Export => ({
  locations: [],
  services: [],
  resources: [],
  serviceAllocations: [],
  resourceAllocations: [],
  resourceBlocks: [],
  customers: [],
  appointments: [],
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export function createV1Client(source: V1Source, deps: V1ClientDeps): V1Client {
  const sleep = deps.sleep ?? defaultSleep;
  const maxAttempts = Math.max(1, deps.maxAttempts ?? 5);
  const now = deps.now ?? Date.now;
  const base = source.baseUrl.replace(/\/+$/, '');
  let token: { value: string; renewAt: number } | null = null;
  let pendingToken: Promise<string> | null = null;

  /**
   * One request with retries. Answers that are not retried (any status below 500 but 429) are
   * handed back for the caller to judge; a request that never got a usable answer throws.
   */
  async function send(url: string, label: string, init: () => RequestInit): Promise<Answer> {
    for (let attempt = 1; ; attempt += 1) {
      let wait: number | null = null;
      let last: string;
      let lastStatus: number | null;
      try {
        const response = await deps.fetch(url, init());
        const text = await response.text();
        if (response.status !== 429 && response.status < 500) return { status: response.status, headers: response.headers, text };
        lastStatus = response.status;
        const detail = detailOf(text);
        last = `answered ${response.status}${detail ? `: ${detail}` : ''}`;
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'), now());
        if (retryAfter !== null) wait = Math.min(retryAfter, RETRY_AFTER_CAP_MS);
      } catch (error) {
        if (error instanceof OutboundRefusedError) throw new V1SourceError(`the v1 source address is not allowed: ${error.message}`, null, label);
        lastStatus = null;
        const name = error instanceof Error ? error.name : '';
        last = name === 'TimeoutError' || name === 'AbortError' ? 'did not answer before the deadline' : `could not be reached (${error instanceof Error ? error.message : String(error)})`;
      }
      if (attempt >= maxAttempts) {
        throw new V1SourceError(`the v1 source ${last} for ${label} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`, lastStatus, label);
      }
      await sleep(wait ?? backoffMs(attempt));
    }
  }

  async function fetchToken(): Promise<string> {
    const tokenPath = new URL(source.tokenUrl).pathname;
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: source.clientId, client_secret: source.clientSecret, scope: 'OnSchedApi' });
    const answer = await send(source.tokenUrl, `POST ${tokenPath}`, () => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
    }));
    const detail = detailOf(answer.text);
    if (answer.status === 400 || answer.status === 401 || answer.status === 403) {
      // invalid_client (RFC 6749 §5.2) is the usual answer to a wrong id or secret.
      const credentials = answer.status === 401 || /invalid_client|unauthori[sz]ed_client/i.test(answer.text);
      const message = credentials
        ? `the v1 identity server refused the client id or client secret (${answer.status}${detail ? `: ${detail}` : ''}); check source.clientId and source.clientSecret`
        : `the v1 identity server refused the token request (${answer.status}${detail ? `: ${detail}` : ''})`;
      throw new V1SourceError(message, answer.status, tokenPath);
    }
    if (answer.status !== 200) throw new V1SourceError(`the v1 token endpoint answered ${answer.status}${detail ? `: ${detail}` : ''}`, answer.status, tokenPath);
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.text);
    } catch {
      throw new V1SourceError('the v1 token endpoint answered something that is not JSON', answer.status, tokenPath);
    }
    const accessToken = isObject(parsed) ? parsed.access_token : undefined;
    if (typeof accessToken !== 'string' || accessToken === '') throw new V1SourceError('the v1 token endpoint answered without an access_token', answer.status, tokenPath);
    const expiresIn = isObject(parsed) && typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in * 1000 : 0;
    const margin = Math.min(TOKEN_MARGIN_MS, expiresIn / 2);
    token = { value: accessToken, renewAt: now() + expiresIn - margin };
    return accessToken;
  }

  /** The current token, fetched when there is none or it is about to expire; concurrent callers share one fetch. */
  async function accessToken(): Promise<string> {
    if (token && now() < token.renewAt) return token.value;
    pendingToken ??= fetchToken().finally(() => {
      pendingToken = null;
    });
    return pendingToken;
  }

  function urlOf(path: string, query: V1Query): string {
    const url = new URL(`${base}${path.startsWith('/') ? path : `/${path}`}`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  /** GET one v1 path as JSON; a 401 fetches a new token once (it may have been revoked or expired early). */
  async function getJson(path: string, query: V1Query): Promise<unknown> {
    const url = urlOf(path, query);
    const label = `GET ${path}`;
    let answer: Answer | null = null;
    for (let round = 0; round < 2; round += 1) {
      const bearer = await accessToken();
      answer = await send(url, label, () => ({ method: 'GET', headers: { authorization: `Bearer ${bearer}`, accept: 'application/json' } }));
      if (answer.status !== 401) break;
      if (token?.value === bearer) token = null;
    }
    const { status, text } = answer!;
    const detail = detailOf(text);
    if (status === 401) throw new V1SourceError(`the v1 source refused a fresh access token for ${label} (401${detail ? `: ${detail}` : ''}); the client may lack the OnSchedApi scope`, status, path);
    if (status !== 200) throw new V1SourceError(`the v1 source answered ${status} for ${label}${detail ? `: ${detail}` : ''}`, status, path);
    try {
      return JSON.parse(text);
    } catch {
      throw new V1SourceError(`the v1 source answered ${label} with something that is not JSON`, status, path);
    }
  }

  async function list(path: string, query: V1Query = {}, kind: string = path): Promise<V1ListResult> {
    const records: V1Record[] = [];
    const malformed: V1Malformed[] = [];
    let offset = 0;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const body = await getJson(path, { ...query, offset, limit: V1_PAGE_LIMIT });
      if (!isObject(body) || !Array.isArray(body.data)) throw new V1SourceError(`the v1 source answered GET ${path} without a list envelope (no data array)`, 200, path);
      body.data.forEach((row: unknown, i) => {
        if (isObject(row)) records.push(row);
        else malformed.push({ kind, index: offset + i, reason: `row ${offset + i} of GET ${path} is ${row === null ? 'null' : Array.isArray(row) ? 'an array' : `a ${typeof row}`}, not an object` });
      });
      if (body.hasMore !== true) return { records, malformed };
      const count = typeof body.count === 'number' && Number.isInteger(body.count) ? body.count : body.data.length;
      // hasMore with an empty page would ask for the same page forever.
      if (count <= 0) throw new V1SourceError(`the v1 source answered GET ${path} with hasMore but no rows at offset ${offset}`, 200, path);
      offset += count;
    }
    throw new V1SourceError(`GET ${path} had more than ${MAX_PAGES} pages`, 200, path);
  }

  async function readExport(): Promise<V1ReadResult> {
    const data = emptyExport();
    const malformed: V1Malformed[] = [];
    const take = (kind: V1Kind, result: V1ListResult, seen: Set<string>) => {
      malformed.push(...result.malformed);
      for (const record of result.records) {
        const id = idOf(record);
        if (id !== null) {
          // Setup lists of different locations may repeat a company-wide record (v1-source.md §2).
          if (seen.has(id)) continue;
          seen.add(id);
        }
        data[kind].push(record);
      }
    };
    const seen = Object.fromEntries(V1_KINDS.map((kind) => [kind, new Set<string>()])) as Record<V1Kind, Set<string>>;

    take('locations', await list('/setup/v1/locations', {}, 'locations'), seen.locations);
    // Setup lists default to the primary location without locationId: ask per location.
    for (const location of data.locations) {
      const locationId = idOf(location);
      if (locationId === null) continue;
      take('services', await list('/setup/v1/services', { locationId }, 'services'), seen.services);
      take('resources', await list('/setup/v1/resources', { locationId }, 'resources'), seen.resources);
      // Service id 0 lists every allocation of the location (v1-source.md §3).
      take('serviceAllocations', await list('/setup/v1/services/0/allocations', { locationId }, 'serviceAllocations'), seen.serviceAllocations);
    }
    for (const resource of data.resources) {
      const resourceId = idOf(resource);
      if (resourceId === null) continue;
      const id = encodeURIComponent(resourceId);
      take('resourceAllocations', await list(`/setup/v1/resources/${id}/allocations`, {}, 'resourceAllocations'), seen.resourceAllocations);
      take('resourceBlocks', await list(`/setup/v1/resources/${id}/blocks`, {}, 'resourceBlocks'), seen.resourceBlocks);
    }
    // Customers and appointments come from the consumer interface (v1-source.md §0, source C):
    // customers default to the first location without locationId, so each location is asked and
    // the answers de-duplicated. Appointments are read from yesterday's UTC date on: only those
    // from today on migrate (the planner drops the rest in the location's zone), and a day of
    // margin keeps the zones behind UTC whole.
    const fromDate = new Date(now() - 86_400_000).toISOString().slice(0, 10);
    for (const location of data.locations) {
      const locationId = idOf(location);
      if (locationId === null) continue;
      take('customers', await list('/consumer/v1/customers', { locationId }, 'customers'), seen.customers);
      take('appointments', await list('/consumer/v1/appointments', { locationId, startDate: fromDate }, 'appointments'), seen.appointments);
    }
    return { data, malformed };
  }

  return { list, readExport };
}
