import Handlebars from 'handlebars';
import { DateTime } from 'luxon';
import type { Address, Channel } from '../../platform/database/schema.js';
import { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';
import { errorMessage as messageOf } from '../../platform/values.js';

/**
 * Notification templates: Handlebars with the merge variables of the specification. Pure: no
 * database, no I/O.
 *
 * Every template is compiled with the same options:
 * - `compat: true`: a name not found in the current context is looked up in the enclosing ones, so
 *   inside `{{#each resources}}` a bare `{{name}}` is the current resource's while
 *   `{{appointment.time}}` (an outer path) still works, as the specification asks. `@root.` paths
 *   and `../` work too. The root keys are never `name`, `email` or `phone`, and every resource
 *   carries those three as strings (empty when unknown), so a resource's field never falls through
 *   to something else.
 * - `noEscape: true`: subjects and bodies are plain text (email text parts and SMS), so `&`, `<`
 *   and quotes are sent as written, never as HTML entities.
 * - `strict: false`: a missing variable renders as an empty string.
 * - Templates run in an isolated Handlebars environment with no partials or custom helpers; the
 *   built-in `log` helper is a no-op, so a template cannot write to the server's log.
 */
const hb = Handlebars.create();
hb.registerHelper('log', () => '');

const COMPILE_OPTIONS = { compat: true, noEscape: true, strict: false } as const;

/** The helpers a template may call; anything else with arguments is refused at save time. */
const BLOCK_HELPERS = new Set(['if', 'unless', 'each', 'with']);
const BUILTIN_NAMES = new Set(['if', 'unless', 'each', 'with', 'lookup', 'log', 'helperMissing', 'blockHelperMissing']);

type Node = hbs.AST.Node;
type Program = hbs.AST.Program;

/** The AST nodes this check looks into, by their `type` tag. */
interface NodeOfType {
  PathExpression: hbs.AST.PathExpression;
  SubExpression: hbs.AST.SubExpression;
  MustacheStatement: hbs.AST.MustacheStatement;
  BlockStatement: hbs.AST.BlockStatement;
}

/** Handlebars tags every AST node with its kind in `type`; this narrows a node by it. */
function isNode<K extends keyof NodeOfType>(node: Node, type: K): node is NodeOfType[K] {
  return node.type === type;
}

const lineOf = (node: Node) => node.loc?.start.line ?? 1;

/** The helper name a path names, when it is a plain one-part name (`each`, not `this.each`). */
function helperName(path: Node): string | null {
  if (!isNode(path, 'PathExpression')) return null;
  return !path.data && path.depth === 0 && path.parts.length === 1 ? (path.parts[0] ?? null) : null;
}

function hasHash(node: { hash?: hbs.AST.Hash }): boolean {
  return (node.hash?.pairs.length ?? 0) > 0;
}

/** A call's parameters and hash values. */
const argumentsOf = (node: { params: Node[]; hash?: hbs.AST.Hash }): Node[] => [...node.params, ...(node.hash?.pairs.map((pair) => pair.value) ?? [])];

/** The first problem in expressions (parameters, hash values, sub-expressions), or null. */
function checkExpressions(expressions: Node[]): string | null {
  for (const sub of expressions) {
    if (!isNode(sub, 'SubExpression')) continue;
    const name = helperName(sub.path);
    if (name !== 'lookup') return `Only the lookup helper can be used in a sub-expression (line ${lineOf(sub)})`;
    if (sub.params.length !== 2) return `lookup takes exactly two arguments (line ${lineOf(sub)})`;
    const inner = checkExpressions(argumentsOf(sub));
    if (inner) return inner;
  }
  return null;
}

/** A `{{...}}`: a value, a lookup, or nothing that calls a helper. */
function checkMustache(mustache: hbs.AST.MustacheStatement): string | null {
  const name = helperName(mustache.path);
  const isCall = mustache.params.length > 0 || hasHash(mustache);
  if (name === 'lookup') {
    if (mustache.params.length !== 2) return `lookup takes exactly two arguments (line ${lineOf(mustache)})`;
  } else if (name !== null && BUILTIN_NAMES.has(name)) {
    return BLOCK_HELPERS.has(name)
      ? `${name} must be used as a block: {{#${name} ...}}...{{/${name}}} (line ${lineOf(mustache)})`
      : `The ${name} helper is not available in templates (line ${lineOf(mustache)})`;
  } else if (isCall) {
    return `Unknown helper "${name ?? 'expression'}" (line ${lineOf(mustache)}); available: if, unless, each, with, lookup`;
  }
  return checkExpressions(argumentsOf(mustache));
}

/** A `{{#...}}` block of a built-in block helper (never an `each` inside another), and what it holds. */
function checkBlock(block: hbs.AST.BlockStatement, eachLine: number | null): string | null {
  const name = helperName(block.path);
  const line = lineOf(block);
  if (name !== null && BLOCK_HELPERS.has(name)) {
    if (block.params.length !== 1) return `#${name} takes exactly one argument (line ${line})`;
    if (name === 'each' && eachLine !== null) {
      return `Nested {{#each}} blocks are not supported: the {{#each}} at line ${line} is inside the {{#each}} at line ${eachLine}`;
    }
  } else if (name !== null && BUILTIN_NAMES.has(name)) {
    return `The ${name} helper cannot be used as a block (line ${line})`;
  } else if (block.params.length > 0 || hasHash(block)) {
    return `Unknown block helper "${name ?? 'expression'}" (line ${line}); available: if, unless, each, with`;
  }
  const problem = checkExpressions(argumentsOf(block));
  if (problem) return problem;
  const inner = name === 'each' ? line : eachLine;
  return checkProgram(block.program, inner) ?? checkProgram(block.inverse, inner);
}

/**
 * Walks the template: refuses a `{{#each}}` anywhere inside another (directly or through
 * if/unless/with blocks, in either branch), partials, decorators and calls of helpers that do not
 * exist, so that what is saved renders.
 */
function checkProgram(program: Program | undefined, eachLine: number | null): string | null {
  for (const statement of program?.body ?? []) {
    const problem = checkStatement(statement, eachLine);
    if (problem) return problem;
  }
  return null;
}

function checkStatement(statement: hbs.AST.Statement, eachLine: number | null): string | null {
  if (statement.type === 'ContentStatement' || statement.type === 'CommentStatement') return null;
  if (isNode(statement, 'MustacheStatement')) return checkMustache(statement);
  if (isNode(statement, 'BlockStatement')) return checkBlock(statement, eachLine);
  if (statement.type === 'PartialStatement' || statement.type === 'PartialBlockStatement') return `Partials are not supported (line ${lineOf(statement)})`;
  // Decorators ({{* ...}}, {{#* ...}}) and anything a later Handlebars adds.
  return `Unsupported template syntax ${statement.type} (line ${lineOf(statement)})`;
}


/** A parse error on one line, without the caret drawing and the parser's long list of expected tokens. */
const oneLine = (message: string) =>
  message
    .replace(/\n-*\^\n/g, ' ')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/Expecting (?:'[^']*', ){3,}got '([^']*)'/, "unexpected '$1'")
    .trim();

/**
 * Why a template source cannot be saved, or null when it can: it does not parse or compile, it has
 * a nested `{{#each}}` (unsupported, refused at save time), a partial, a decorator, or a call of a
 * helper that does not exist. As a last check it is rendered once with sample data.
 */
export function compileCheck(source: string): string | null {
  let ast: Program;
  try {
    ast = hb.parse(source);
  } catch (error) {
    return `Does not compile: ${oneLine(messageOf(error))}`;
  }
  const problem = checkProgram(ast, null);
  if (problem) return problem;
  try {
    hb.precompile(source, COMPILE_OPTIONS);
    hb.compile(source, COMPILE_OPTIONS)(SAMPLE_CONTEXT);
  } catch (error) {
    return `Does not compile: ${oneLine(messageOf(error))}`;
  }
  return null;
}

// --- Merge context -----------------------------------------------------------------------------

type CustomFieldName = (typeof CUSTOM_FIELD_NAMES)[number];

/** What a message is about: the appointment as the API returns it and the records it names. */
export interface MergeData {
  appointment: {
    id: string;
    startTime: string | Date;
    endTime: string | Date;
    duration: number;
    timezoneName?: string | null | undefined;
    status: string;
    notes?: string | null | undefined;
  } & Partial<Record<CustomFieldName, string | null>>;
  company: { name: string };
  location: {
    name: string;
    timezoneName: string;
    /** The location's address object (or a ready string). */
    address?: unknown;
    phone?: string | null | undefined;
    email?: string | null | undefined;
  };
  service: { name: string; duration: number };
  customer: { firstName: string; lastName?: string | null | undefined; email: string; phone?: string | null | undefined } | null;
  resources: Array<{ name: string; email?: string | null | undefined; phone?: string | null | undefined }>;
  /** The customer's manage link (modules/manage/links.ts); only customer messages carry one. */
  manageUrl?: string | null | undefined;
}

export interface MergeResource {
  name: string;
  email: string;
  phone: string;
}

/** The variables a template sees (docs/api.md, "Notification templates", lists them). */
export interface MergeContext {
  appointment: {
    id: string;
    /** Start date in the location's zone, for example `Monday 2 March 2026`. */
    date: string;
    /** Start time in the location's zone, `HH:mm`. */
    time: string;
    /** End time in the location's zone, `HH:mm`. */
    endTime: string;
    duration: number;
    status: string;
    notes: string;
    /** Every resource's name, comma-separated. */
    resources: string;
    /** The first resource's name. */
    resource: string;
    location: string;
    service: string;
    /** The IANA zone the date and times are in. */
    timezone: string;
    /** The customer's manage link (see, cancel, reschedule); empty in staff messages and without PUBLIC_BASE_URL. */
    manageUrl: string;
  } & Record<CustomFieldName, string>;
  customer: { firstName: string; lastName: string; name: string; email: string; phone: string; resource: string };
  /** The first resource ({name: '', ...} when there is none). */
  resource: MergeResource;
  resources: MergeResource[];
  location: { name: string; timezone: string; address: string; phone: string; email: string };
  service: { name: string; duration: number };
  company: { name: string };
}

export const DATE_FORMAT = 'cccc d LLLL yyyy';
export const TIME_FORMAT = 'HH:mm';

const text = (value: string | null | undefined) => value ?? '';

/** A location's address on one line: "addressLine1, addressLine2, city, state postalCode, country". */
function formatAddress(address: unknown): string {
  if (!address) return '';
  if (typeof address === 'string') return address;
  if (typeof address !== 'object') return '';
  const fields = new Map<string, unknown>(Object.entries(address));
  const part = (key: keyof Address) => {
    const value = fields.get(key);
    return typeof value === 'string' ? value : '';
  };
  const cityLine = [part('city'), [part('state'), part('postalCode')].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [part('addressLine1'), part('addressLine2'), cityLine, part('country')].filter(Boolean).join(', ');
}

function zoneOf(data: MergeData): string {
  for (const candidate of [data.location.timezoneName, data.appointment.timezoneName]) {
    if (candidate && DateTime.now().setZone(candidate).isValid) return candidate;
  }
  return 'UTC';
}

function instant(value: string | Date, zone: string): DateTime {
  const parsed = value instanceof Date ? DateTime.fromJSDate(value) : DateTime.fromISO(value, { setZone: true });
  return parsed.setZone(zone).setLocale('en-GB');
}

/** Builds the merge variables of one message. Dates and times are in the location's zone. */
export function buildMergeContext(data: MergeData): MergeContext {
  const zone = zoneOf(data);
  const start = instant(data.appointment.startTime, zone);
  const end = instant(data.appointment.endTime, zone);
  const resources: MergeResource[] = data.resources.map((r) => ({ name: r.name, email: text(r.email), phone: text(r.phone) }));
  const first = resources[0] ?? { name: '', email: '', phone: '' };
  const names = resources.map((r) => r.name).join(', ');
  const customer = data.customer;
  // Built from CUSTOM_FIELD_NAMES, so it has exactly those keys (fromEntries cannot say so).
  const customFields = Object.fromEntries(CUSTOM_FIELD_NAMES.map((name) => [name, text(data.appointment[name])])) as Record<CustomFieldName, string>;

  return {
    appointment: {
      id: data.appointment.id,
      date: start.isValid ? start.toFormat(DATE_FORMAT) : '',
      time: start.isValid ? start.toFormat(TIME_FORMAT) : '',
      endTime: end.isValid ? end.toFormat(TIME_FORMAT) : '',
      duration: data.appointment.duration,
      status: data.appointment.status,
      notes: text(data.appointment.notes),
      resources: names,
      resource: first.name,
      location: data.location.name,
      service: data.service.name,
      timezone: zone,
      manageUrl: text(data.manageUrl),
      ...customFields,
    },
    customer: {
      firstName: customer?.firstName ?? '',
      lastName: text(customer?.lastName),
      name: customer ? [customer.firstName, customer.lastName].filter(Boolean).join(' ') : '',
      email: customer?.email ?? '',
      phone: text(customer?.phone),
      resource: first.name,
    },
    resource: { ...first },
    resources,
    location: {
      name: data.location.name,
      timezone: zone,
      address: formatAddress(data.location.address),
      phone: text(data.location.phone),
      email: text(data.location.email),
    },
    service: { name: data.service.name, duration: data.service.duration },
    company: { name: data.company.name },
  };
}

/** A three-resource appointment, for the trial render at save time (and for previews). */
export const SAMPLE_DATA: MergeData = {
  appointment: {
    id: '00000000-0000-4000-8000-000000000000',
    startTime: '2026-03-02T09:00:00Z',
    endTime: '2026-03-02T09:45:00Z',
    duration: 45,
    timezoneName: 'Europe/London',
    status: 'BK',
    notes: 'Sample notes',
  },
  company: { name: 'Sample Company' },
  location: { name: 'Sample Location', timezoneName: 'Europe/London', address: '1 Sample Street, London', phone: '+442000000000', email: 'location@example.com' },
  service: { name: 'Sample Service', duration: 45 },
  customer: { firstName: 'Sam', lastName: 'Sample', email: 'sam@example.com', phone: '+447700900000' },
  resources: [
    { name: 'Alex', email: 'alex@example.com', phone: '+447700900001' },
    { name: 'Blake', email: 'blake@example.com', phone: null },
    { name: 'Casey', email: null, phone: '+447700900003' },
  ],
  manageUrl: 'https://booking.example.com/manage/sample-token',
};
const SAMPLE_CONTEXT = buildMergeContext(SAMPLE_DATA);

// --- Rendering ---------------------------------------------------------------------------------

/** Compiled templates by source: defaults and a company's templates render many times. */
const compiled = new Map<string, Handlebars.TemplateDelegate>();
const COMPILED_LIMIT = 1000;

function compile(source: string): Handlebars.TemplateDelegate {
  let template = compiled.get(source);
  if (!template) {
    template = hb.compile(source, COMPILE_OPTIONS);
    if (compiled.size >= COMPILED_LIMIT) compiled.clear();
    compiled.set(source, template);
  }
  return template;
}

export interface RenderedMessage {
  /** The email subject on one line; null for SMS (the subject of an SMS template is never sent). */
  subject: string | null;
  /** The plain-text body. */
  text: string;
}

/**
 * Renders a template for one channel. EMAIL: the subject (line breaks folded to spaces, so a merge
 * value cannot add a header line) and the body as plain text. SMS: the body only, trimmed; the
 * subject is not rendered. Throws when the template cannot be rendered (saved templates are
 * checked by `compileCheck`, so that means a template that bypassed it).
 */
export function renderTemplate(template: { subject?: string | null; body: string }, context: MergeContext, channel: Channel): RenderedMessage {
  const body = compile(template.body)(context);
  if (channel === 'SMS') return { subject: null, text: body.trim() };
  const subject = compile(template.subject ?? '')(context).replace(/\s+/g, ' ').trim();
  return { subject, text: body };
}
