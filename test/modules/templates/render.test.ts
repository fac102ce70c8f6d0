// Templates without a database: the merge variables of the specification's table (its
// Notification templates) for a three-resource appointment, the save-time checks (nested each,
// templates that do not compile) and the per-channel rendering.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildMergeContext, compileCheck, renderTemplate } from '../../../src/modules/templates/render.js';
import type { MergeData } from '../../../src/modules/templates/render.js';
import { DEFAULT_TEMPLATES, RECIPIENT_TYPES, TEMPLATE_TYPES, defaultTemplate } from '../../../src/modules/templates/defaults.js';

/** 2026-07-06 is a Monday; 13:30Z is 15:30 in Paris (summer time). */
const DATA: MergeData = {
  appointment: {
    id: '6f1c2b8e-1d2a-4c3b-9e4f-5a6b7c8d9e0f',
    startTime: '2026-07-06T13:30:00.000Z',
    endTime: '2026-07-06T14:15:00.000Z',
    duration: 45,
    timezoneName: 'Europe/Paris',
    status: 'BK',
    notes: 'Bring <forms> & ID',
    field1: 'Room 4',
    field2: null,
  },
  company: { name: 'Acme & Sons' },
  location: {
    name: 'Downtown',
    timezoneName: 'Europe/Paris',
    address: { addressLine1: '1 Rue de Rivoli', city: 'Paris', postalCode: '75001', country: 'FR' },
    phone: '+33100000000',
    email: 'downtown@acme.example',
  },
  service: { name: 'Consultation', duration: 45 },
  customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+447700900123' },
  resources: [
    { name: 'Dr Grace', email: 'grace@acme.example', phone: '+33600000001' },
    { name: 'Nurse Alan', email: null, phone: '+33600000002' },
    { name: 'Room B', email: 'room-b@acme.example', phone: null },
  ],
};

const context = buildMergeContext(DATA);
const body = (source: string) => renderTemplate({ subject: 'S', body: source }, context, 'EMAIL').text;

describe('multi-resource merge variables (the specification table, three resources)', () => {
  test('{{appointment.resources}} is every resource name, comma-separated', () => {
    assert.equal(body('{{appointment.resources}}'), 'Dr Grace, Nurse Alan, Room B');
  });

  test('{{#each resources}} repeats once per resource; bare keys are the current resource', () => {
    assert.equal(body('{{#each resources}}[{{name}}|{{email}}|{{phone}}]{{/each}}'), '[Dr Grace|grace@acme.example|+33600000001][Nurse Alan||+33600000002][Room B|room-b@acme.example|]');
    assert.equal(body('{{#each resources}}{{@index}}:{{name}}{{#unless @last}}, {{/unless}}{{/each}}'), '0:Dr Grace, 1:Nurse Alan, 2:Room B');
  });

  test('outer paths still work inside each: plain, @root and ../', () => {
    assert.equal(body('{{#each resources}}{{name}} at {{appointment.time}};{{/each}}'), 'Dr Grace at 15:30;Nurse Alan at 15:30;Room B at 15:30;');
    assert.equal(body('{{#each resources}}{{@root.appointment.time}}/{{../customer.firstName}}/{{company.name}};{{/each}}'), '15:30/Ada/Acme & Sons;'.repeat(3));
    assert.equal(body('{{#each resources}}{{customer.name}} with {{name}}, {{location.name}}\n{{/each}}'), 'Ada Lovelace with Dr Grace, Downtown\n'.repeat(1) + 'Ada Lovelace with Nurse Alan, Downtown\nAda Lovelace with Room B, Downtown\n');
  });

  test('a resource field that is unknown stays empty inside each, never an outer value', () => {
    // Nurse Alan has no email and Room B no phone: neither takes the customer's or the location's.
    assert.equal(body('{{#each resources}}{{email}};{{/each}}'), 'grace@acme.example;;room-b@acme.example;');
    assert.equal(body('{{#each resources}}{{phone}};{{/each}}'), '+33600000001;+33600000002;;');
  });

  test('{{resources.0.name}}, {{resources.1.name}}, {{resources.2.name}}: indexed access', () => {
    assert.equal(body('{{resources.0.name}} | {{resources.1.name}} | {{resources.2.name}} | {{resources.3.name}}'), 'Dr Grace | Nurse Alan | Room B | ');
    assert.equal(body('{{resources.0.email}} {{resources.2.email}} {{resources.[1].phone}}'), 'grace@acme.example room-b@acme.example +33600000002');
  });

  test('{{resource.name}}, {{appointment.resource}}, {{customer.resource}}: the first resource only', () => {
    assert.equal(body('{{resource.name}}|{{resource.email}}|{{resource.phone}}'), 'Dr Grace|grace@acme.example|+33600000001');
    assert.equal(body('{{appointment.resource}}|{{customer.resource}}'), 'Dr Grace|Dr Grace');
  });

  test('with one resource and with none', () => {
    const one = buildMergeContext({ ...DATA, resources: [DATA.resources[1]!] });
    assert.equal(renderTemplate({ body: '{{appointment.resources}}/{{appointment.resource}}/{{#each resources}}<{{name}}>{{/each}}' }, one, 'SMS').text, 'Nurse Alan/Nurse Alan/<Nurse Alan>');
    const none = buildMergeContext({ ...DATA, resources: [] });
    assert.equal(renderTemplate({ body: '[{{appointment.resources}}][{{resource.name}}][{{#each resources}}x{{/each}}][{{customer.resource}}]' }, none, 'SMS').text, '[][][][]');
  });
});

describe('the other merge variables', () => {
  test('appointment date and times are in the location zone', () => {
    assert.equal(body('{{appointment.date}} {{appointment.time}}-{{appointment.endTime}} {{appointment.timezone}}'), 'Monday 6 July 2026 15:30-16:15 Europe/Paris');
    const tokyo = buildMergeContext({ ...DATA, location: { ...DATA.location, timezoneName: 'Asia/Tokyo' } });
    assert.equal(renderTemplate({ body: '{{appointment.date}} {{appointment.time}}' }, tokyo, 'SMS').text, 'Monday 6 July 2026 22:30');
  });

  test('appointment, customer, location, service and company fields', () => {
    assert.equal(
      body('{{appointment.id}}|{{appointment.duration}}|{{appointment.status}}|{{appointment.location}}|{{appointment.service}}|{{appointment.field1}}|{{appointment.field2}}'),
      `${DATA.appointment.id}|45|BK|Downtown|Consultation|Room 4|`,
    );
    assert.equal(body('{{customer.firstName}}|{{customer.lastName}}|{{customer.name}}|{{customer.email}}|{{customer.phone}}'), 'Ada|Lovelace|Ada Lovelace|ada@example.com|+447700900123');
    assert.equal(body('{{location.name}}|{{location.address}}|{{location.phone}}|{{location.email}}|{{location.timezone}}'), 'Downtown|1 Rue de Rivoli, Paris, 75001, FR|+33100000000|downtown@acme.example|Europe/Paris');
    assert.equal(body('{{service.name}}|{{service.duration}}|{{company.name}}'), 'Consultation|45|Acme & Sons');
  });

  test('text is not HTML-escaped (plain-text email and SMS)', () => {
    assert.equal(body('{{appointment.notes}} {{company.name}}'), 'Bring <forms> & ID Acme & Sons');
  });

  test('a missing variable renders empty', () => {
    assert.equal(body('[{{nothing}}][{{appointment.nothing}}][{{a.b.c}}][{{resources.9.name}}]'), '[][][][]');
    const noCustomer = buildMergeContext({ ...DATA, customer: null });
    assert.equal(renderTemplate({ body: 'Hi {{customer.firstName}}{{customer.name}}!' }, noCustomer, 'SMS').text, 'Hi !');
  });
});

describe('rendering per channel', () => {
  test('EMAIL renders subject and body; the subject stays on one line', () => {
    const rendered = renderTemplate({ subject: '{{service.name}}\non {{appointment.date}}', body: 'Hello {{customer.firstName}}' }, context, 'EMAIL');
    assert.deepEqual(rendered, { subject: 'Consultation on Monday 6 July 2026', text: 'Hello Ada' });
  });

  test('SMS has no subject: only the body is sent', () => {
    const rendered = renderTemplate({ subject: 'Subject {{company.name}}', body: ' {{service.name}} at {{appointment.time}} ' }, context, 'SMS');
    assert.deepEqual(rendered, { subject: null, text: 'Consultation at 15:30' });
  });
});

describe('save-time checks', () => {
  test('accepted: merge variables, one each, each after each, if/unless/with, lookup', () => {
    for (const source of [
      'Hello {{customer.firstName}}',
      '{{#each resources}}{{name}}{{/each}}',
      '{{#each resources}}{{name}}{{/each}} and {{#each resources}}{{email}}{{/each}}',
      '{{#if resources.[1]}}several{{else}}one{{/if}}',
      '{{#each resources}}{{#if email}}{{email}}{{else}}-{{/if}}{{/each}}',
      '{{#with customer}}{{name}}{{/with}} {{#unless customer.phone}}no phone{{/unless}}',
      '{{lookup (lookup resources 1) "name"}}',
      '{{! a comment }}plain text',
      '',
    ]) {
      assert.equal(compileCheck(source), null, source);
    }
  });

  test('a nested each is refused, also inside if, with, unless or else', () => {
    for (const source of [
      '{{#each resources}}{{#each resources}}{{name}}{{/each}}{{/each}}',
      '{{#each resources}}{{#if email}}{{#each ../resources}}x{{/each}}{{/if}}{{/each}}',
      '{{#each resources}}{{#with this}}{{#unless phone}}{{#each ../resources}}x{{/each}}{{/unless}}{{/with}}{{/each}}',
      '{{#each resources}}{{#if email}}a{{else}}{{#each ../resources}}x{{/each}}{{/if}}{{/each}}',
      '{{#each resources}}{{#if email}}a{{else each ../resources}}x{{/if}}{{/each}}',
      '{{#each resources}}none{{else}}{{#each resources}}x{{/each}}{{/each}}',
    ]) {
      assert.match(compileCheck(source) ?? '', /Nested \{\{#each\}\} blocks are not supported/, source);
    }
  });

  test('a template that does not compile is refused with a one-line reason', () => {
    for (const source of ['{{#if customer.email}}unclosed', '{{customer.name', '{{#each resources}}{{/if}}', '{{{customer.name}}', '{{resources.1}}']) {
      const problem = compileCheck(source);
      assert.match(problem ?? '', /^Does not compile: /, source);
      assert.doesNotMatch(problem!, /\n/);
    }
  });

  test('unknown helpers, partials, decorators and misused built-ins are refused', () => {
    for (const [source, pattern] of [
      ['{{uppercase customer.name}}', /Unknown helper "uppercase"/],
      ['{{#repeat 3}}x{{/repeat}}', /Unknown block helper "repeat"/],
      ['{{> footer}}', /Partials are not supported/],
      ['{{#> layout}}x{{/layout}}', /Partials are not supported/],
      ['{{#*inline "p"}}x{{/inline}}', /Unsupported template syntax/],
      ['{{log "secret"}}', /log helper is not available/],
      ['{{each resources}}', /each must be used as a block/],
      ['{{#each}}x{{/each}}', /#each takes exactly one argument/],
      ['{{lookup resources}}', /lookup takes exactly two arguments/],
      ['{{customer.name (foo 1)}}', /Unknown helper/],
    ] as const) {
      assert.match(compileCheck(source) ?? '', pattern, source);
    }
  });
});

describe('platform defaults', () => {
  test('every type and recipient has an email default; every type but EXTERNAL_CALENDAR_EVENT an SMS default', () => {
    for (const type of TEMPLATE_TYPES) {
      for (const recipientType of RECIPIENT_TYPES) {
        const email = DEFAULT_TEMPLATES.find((t) => t.type === type && t.recipientType === recipientType && t.channel === 'EMAIL');
        assert.ok(email?.subject && email.body, `${type} ${recipientType} EMAIL`);
        const sms = DEFAULT_TEMPLATES.find((t) => t.type === type && t.recipientType === recipientType && t.channel === 'SMS');
        assert.equal(Boolean(sms), type !== 'EXTERNAL_CALENDAR_EVENT', `${type} ${recipientType} SMS`);
      }
    }
    assert.equal(DEFAULT_TEMPLATES.length, 6 * 3 + 5 * 3);
    assert.equal(defaultTemplate('EXTERNAL_CALENDAR_EVENT', 'RESOURCE', 'SMS').channel, 'EMAIL');
  });

  test('every default passes the save-time checks and renders the multi-resource forms', () => {
    for (const template of DEFAULT_TEMPLATES) {
      const label = `${template.type} ${template.recipientType} ${template.channel}`;
      assert.equal(compileCheck(template.subject), null, label);
      assert.equal(compileCheck(template.body), null, label);
      const rendered = renderTemplate(template, context, template.channel);
      assert.match(rendered.text, /Dr Grace, Nurse Alan, Room B/, label);
      assert.doesNotMatch(`${rendered.subject ?? ''}${rendered.text}`, /\{\{|\}\}|\[object Object\]/, label);
      if (template.channel === 'SMS') assert.ok(rendered.text.length <= 200, `${label}: ${rendered.text.length} characters`);
    }
  });

  test('the staff email lists each resource with its contact details', () => {
    const text = renderTemplate(defaultTemplate('APPOINTMENT_BOOKED', 'BUSINESS', 'EMAIL'), context, 'EMAIL').text;
    assert.match(text, /- Dr Grace <grace@acme\.example>, \+33600000001\n- Nurse Alan, \+33600000002\n- Room B <room-b@acme\.example>\n/);
    assert.match(text, /Monday 6 July 2026, 15:30 to 16:15 \(Europe\/Paris\)/);
  });
});
