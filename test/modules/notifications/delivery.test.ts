// End-to-end delivery of what happens to appointments: webhooks to a real HTTPS receiver on this
// machine (self-signed certificate trusted only through the test-only allowance), email to a real
// SMTP server (smtp-server) and SMS to a local stand-in of a Twilio-style API, reminders, and
// exactly-once delivery with two dispatchers on one database.
//
// The dispatcher claims every company's events in its database, so this file has a database of its
// own (dedicatedDatabase) and its tests run one after another; each drains what it wrote, and
// checks only what belongs to its own tenant, receiver path or appointment ids.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { buildApp } from '../../../src/app.js';
import type { App } from '../../../src/platform/http/types.js';
import { TEST_SECRETS, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { SmsStandIn, SmtpStandIn } from '../../helpers/stand-ins.js';
import { ALWAYS_OPEN, EVERY_DAY, LONDON } from '../../helpers/world.js';
import type { BookableOptions } from '../../helpers/world.js';
import { create, dayAhead, operate, request, setup, slot } from '../appointments/fixtures.js';
import type { Appointment } from '../appointments/fixtures.js';
import { deadPort } from './receiver.js';
import type { Hit, Receiver } from './receiver.js';
import {
  BOOKING_TRIGGERS,
  appointmentStatus,
  createWebhook,
  deliveries,
  notificationLog,
  outboxEvents,
  reminderOffsets,
  saveTemplate,
  scheduleRemindersAt,
  startDelivering,
  updateCompany,
  updateLocation,
} from './helpers.js';

let context: TestContext;
let receiver: Receiver;
let smtp: SmtpStandIn;
let sms: SmsStandIn;
let stop: () => Promise<void>;

before(async () => {
  // Small batches: a drain takes several passes, and two dispatchers interleave.
  ({ context, receiver, smtp, sms, close: stop } = await startDelivering({ OUTBOX_BATCH_SIZE: '4' }));
});
after(() => stop());

const unique = () => randomUUID().slice(0, 8);
const drain = () => context.app.dispatcher.drain();
const emailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));
const smsTo = (phone: string) => sms.messages.filter((m) => m.to === phone);
const hitsFor = (url: string, appointmentId: string): Hit[] => receiver.hitsTo(url).filter((hit) => hit.json?.appointment?.id === appointmentId);

// ---------------------------------------------------------------------------------------------
// Webhooks

describe('webhook delivery to a real HTTPS receiver', () => {
  test('booking and cancelling POST {appointment, trigger} as JSON with the configured header, to the matching webhook only; company flags do not matter', async () => {
    const s = await setup(context);
    const otherLocation = await s.tenant.location({ name: 'Other', hours: EVERY_DAY });
    const url = receiver.url('/hook?x=1');
    const hook = await createWebhook(s, s.locationId, { url, headers: { 'X-Secret': 's3cret' }, triggers: BOOKING_TRIGGERS });
    assert.equal(hook.url, url, 'the query string is kept');
    const elsewhere = await createWebhook(s, otherLocation, { url: receiver.url('/hook?x=1&who=other-location'), triggers: BOOKING_TRIGGERS });
    const inactive = await createWebhook(s, s.locationId, { url: receiver.url('/hook?x=1&who=inactive'), triggers: BOOKING_TRIGGERS, active: false });
    const otherTriggers = await createWebhook(s, s.locationId, {
      url: receiver.url('/hook?x=1&who=other-triggers'),
      triggers: ['APPOINTMENT_CONFIRMED', 'APPOINTMENT_RESCHEDULED', 'APPOINTMENT_REMINDER'],
    });
    // Both channels off: messages are suppressed, webhooks are not (Delivery rules 8).
    const company = await updateCompany(s, { disableEmailNotifications: true, disableSmsNotifications: true });
    assert.equal(company.disableEmailNotifications, true);
    assert.equal(company.disableSmsNotifications, true);

    const booked = await create(s, slot(dayAhead(), '10:00'));
    const cancelResponse = await operate(s, booked.id, 'cancel');
    assert.equal(cancelResponse.statusCode, 200, cancelResponse.body);
    const cancelled = json<Appointment>(cancelResponse);
    assert.equal(receiver.hitsTo(url).length, 0, 'nothing is sent before the dispatcher runs');

    await drain();

    const hits = receiver.hitsTo(url);
    assert.equal(hits.length, 2, JSON.stringify(hits.map((h) => h.json?.trigger)));
    for (const hit of hits) {
      assert.equal(hit.method, 'POST');
      assert.equal(hit.headers['content-type'], 'application/json');
      assert.equal(hit.headers['x-secret'], 's3cret');
      assert.deepEqual(Object.keys(hit.json).sort(), ['appointment', 'trigger']);
      assert.equal(hit.json.appointment.id, booked.id);
    }
    const byTrigger = new Map(hits.map((hit) => [hit.json.trigger as string, hit.json.appointment]));
    assert.deepEqual([...byTrigger.keys()].sort(), ['APPOINTMENT_CANCELLED', 'NEW_APPOINTMENT']);
    // The appointment as the API answered when the change happened.
    assert.deepEqual(byTrigger.get('NEW_APPOINTMENT'), booked);
    assert.deepEqual(byTrigger.get('APPOINTMENT_CANCELLED'), cancelled);
    assert.equal(cancelled.status, 'CN');

    assert.deepEqual(
      receiver.hits.filter((hit) => hit.url.includes('who=')).map((hit) => hit.url),
      [],
      'another location, an inactive webhook and one without the trigger receive nothing',
    );

    const list = await deliveries(s, hook.id);
    assert.equal(list.total, 2);
    assert.deepEqual(list.data.map((d) => d.trigger).sort(), ['APPOINTMENT_CANCELLED', 'NEW_APPOINTMENT']);
    for (const delivery of list.data) {
      assert.equal(delivery.outcome, 'delivered', JSON.stringify(delivery));
      assert.equal(delivery.statusCode, 200);
      assert.equal(delivery.error, null);
      assert.equal(delivery.address, '127.0.0.1');
      assert.equal(delivery.url, url);
      assert.equal(delivery.appointmentId, booked.id);
      assert.equal(delivery.webhookId, hook.id);
      assert.ok(delivery.finishedAt);
    }
    const order = list.data.map((d) => [d.createdAt, d.id].join(' '));
    assert.deepEqual(order, [...order].sort().reverse(), 'newest first (createdAt desc, then id desc)');
    const events = await outboxEvents(context, s.tenant.companyId, booked.id);
    assert.deepEqual(new Set(list.data.map((d) => d.eventId)), new Set(events.map((e) => e.id)));

    for (const silent of [elsewhere, inactive, otherTriggers]) assert.equal((await deliveries(s, silent.id)).total, 0);

    // The flags did suppress the messages themselves.
    const log = await notificationLog(s, { appointmentId: booked.id });
    assert.ok(log.length >= 2, JSON.stringify(log));
    for (const row of log) {
      assert.equal(row.status, 'not_sent', JSON.stringify(row));
      assert.match(row.reason ?? '', /turned off/);
    }
    const customerEmail = log.find((row) => row.recipientType === 'CUSTOMER')!.recipient;
    assert.equal(emailsTo(customerEmail).length, 0);
  });

  test('a later event is listed first by GET /v3/webhook/:id/deliveries', async () => {
    const s = await setup(context);
    const url = receiver.url(`/hook?x=1&order=${unique()}`);
    const hook = await createWebhook(s, s.locationId, { url, triggers: BOOKING_TRIGGERS });
    const booked = await create(s, slot(dayAhead(), '11:00'));
    await drain();
    assert.equal((await operate(s, booked.id, 'cancel')).statusCode, 200);
    await drain();
    const list = await deliveries(s, hook.id);
    assert.deepEqual(
      list.data.map((d) => [d.trigger, d.outcome]),
      [
        ['APPOINTMENT_CANCELLED', 'delivered'],
        ['NEW_APPOINTMENT', 'delivered'],
      ],
    );
    assert.deepEqual(
      receiver.hitsTo(url).map((hit) => hit.json.trigger),
      ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'],
    );
  });

  test('a receiver that never answers fails at the five-second deadline, once, while booking goes on', async () => {
    const s = await setup(context);
    const quiet = await setup(context); // a tenant without webhooks, booking while the delivery hangs
    const url = receiver.url('/hang?x=1');
    const hook = await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });
    const booked = await create(s, slot(dayAhead(), '10:00'));

    const started = Date.now();
    let drained = false;
    const draining = drain().then(() => (drained = true));
    await receiver.waitFor(() => hitsFor(url, booked.id).length > 0, 4000, 'the POST to /hang');
    // The dispatcher is waiting on the receiver: a booking now is answered without waiting for it.
    const bookingStarted = Date.now();
    const meanwhile = await request(quiet, 'create', slot(dayAhead(), '10:00'));
    assert.equal(meanwhile.statusCode, 201, meanwhile.body);
    assert.equal(drained, false, `the booking (${Date.now() - bookingStarted} ms) was answered while the delivery still hung`);
    await draining;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 4500 && elapsed < 8000, `the hanging delivery ended after ${elapsed} ms`);

    const [delivery, ...rest] = (await deliveries(s, hook.id)).data;
    assert.equal(rest.length, 0);
    assert.equal(delivery!.outcome, 'failed');
    assert.equal(delivery!.statusCode, null);
    assert.match(delivery!.error ?? '', /^timeout/);
    assert.ok(delivery!.durationMs! >= 4500 && delivery!.durationMs! < 8000, `durationMs ${delivery!.durationMs}`);
    assert.equal(await appointmentStatus(s, booked.id), 'BK', 'the failed delivery did not touch the appointment');

    await drain();
    assert.equal(hitsFor(url, booked.id).length, 1, 'not retried');
    assert.equal((await deliveries(s, hook.id)).total, 1);
  });

  test('a redirect is not followed: the delivery fails and the target is never requested', async () => {
    const s = await setup(context);
    const url = receiver.url('/redirect?x=1');
    const hook = await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });
    const booked = await create(s, slot(dayAhead(), '10:00'));
    await drain();
    assert.equal(hitsFor(url, booked.id).length, 1);
    assert.equal(receiver.hitsToPath('/other').length, 0, 'the Location was not followed');
    const [delivery] = (await deliveries(s, hook.id)).data;
    assert.equal(delivery!.outcome, 'failed');
    assert.equal(delivery!.statusCode, 302);
    assert.match(delivery!.error ?? '', /^redirect/);
  });

  test('a 500 is a failed delivery, sent once and never retried', async () => {
    const s = await setup(context);
    const url = receiver.url('/fail?x=1');
    const hook = await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });
    const booked = await create(s, slot(dayAhead(), '10:00'));
    await drain();
    assert.equal(hitsFor(url, booked.id).length, 1);
    const [delivery] = (await deliveries(s, hook.id)).data;
    assert.equal(delivery!.outcome, 'failed');
    assert.equal(delivery!.statusCode, 500);
    assert.match(delivery!.error ?? '', /^http/);

    await drain();
    await drain();
    assert.equal(hitsFor(url, booked.id).length, 1, 'hit exactly once after more passes');
    assert.equal((await deliveries(s, hook.id)).total, 1);
  });

  test('a failed delivery never fails the booking', async () => {
    const s = await setup(context);
    const url = `https://webhook-receiver.example.com:${await deadPort()}/hook?x=1`;
    const hook = await createWebhook(s, s.locationId, { url, triggers: BOOKING_TRIGGERS });

    const response = await request(s, 'create', slot(dayAhead(), '10:00'));
    assert.equal(response.statusCode, 201, response.body);
    const booked = json<Appointment>(response);
    // The answer came before any delivery: the event waits in the outbox, nothing was attempted.
    const [event, ...others] = await outboxEvents(context, s.tenant.companyId, booked.id);
    assert.equal(others.length, 0);
    assert.equal(event!.trigger, 'NEW_APPOINTMENT');
    assert.equal(event!.processedAt, null);
    assert.equal((await deliveries(s, hook.id)).total, 0);

    await drain();
    const [delivery] = (await deliveries(s, hook.id)).data;
    assert.equal(delivery!.outcome, 'failed');
    assert.match(delivery!.error ?? '', /^network/);
    assert.equal(await appointmentStatus(s, booked.id), 'BK');
    const [processed] = await outboxEvents(context, s.tenant.companyId, booked.id);
    assert.ok(processed!.processedAt, 'the event is done, not left to retry');
    // Messages go out whatever the webhook did.
    const log = await notificationLog(s, { appointmentId: booked.id });
    assert.ok(log.length > 0 && log.every((row) => row.status === 'sent'), JSON.stringify(log));

    // The appointment can still change, and its event is delivered (and fails) the same way.
    assert.equal((await operate(s, booked.id, 'cancel')).statusCode, 200);
    await drain();
    assert.equal(await appointmentStatus(s, booked.id), 'CN');
    assert.deepEqual((await deliveries(s, hook.id)).data.map((d) => [d.trigger, d.outcome]), [
      ['APPOINTMENT_CANCELLED', 'failed'],
      ['NEW_APPOINTMENT', 'failed'],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Email and SMS

describe('email and SMS for a multi-resource appointment', () => {
  const CUSTOMER_EMAIL_TEMPLATE = {
    type: 'APPOINTMENT_BOOKED',
    recipientType: 'CUSTOMER',
    channel: 'EMAIL',
    subject: 'Booked with {{appointment.resources}} (second: {{resources.1.name}})',
    body: [
      'All: {{appointment.resources}}',
      'Each: {{#each resources}}{{name}};{{/each}}',
      'Second: {{resources.1.name}}',
      'First: {{resource.name}}',
      'Yours: {{customer.resource}}',
      '',
    ].join('\n'),
  };
  const RENDERED_BODY = ['All: Ann, Bob, Cy', 'Each: Ann;Bob;Cy;', 'Second: Bob', 'First: Ann', 'Yours: Ann', ''].join('\n');

  test('the customer gets the company template rendered; SMS falls back to its body, then uses the SMS template; staff and business get the defaults', async () => {
    const tag = unique();
    const people = ['Ann', 'Bob', 'Cy'].map((name, index) => ({
      name,
      email: `${name.toLowerCase()}-${tag}@example.com`,
      phone: `+1555${tag.replace(/\D/g, '0').slice(0, 3)}${String(index + 1).padStart(4, '0')}`,
    }));
    const locationEmail = `desk-${tag}@example.com`;
    const locationPhone = '+15559990000';
    // Listed out of order: messages name the resources in name order.
    const s = await setup(context, {
      location: { name: 'Main', email: locationEmail, phone: locationPhone },
      resources: [people[2]!, people[0]!, people[1]!],
    });
    const customerEmail = `ada-${tag}@example.com`;
    const customerPhone = '+15558880000';
    const customer = await s.tenant.customer({ email: customerEmail, phone: customerPhone });
    await saveTemplate(s, CUSTOMER_EMAIL_TEMPLATE);

    const booked = await create(s, { ...slot(dayAhead(), '10:00'), ResourceIds: s.resourceIds, CustomerId: customer });
    assert.equal(booked.resourceIds.length, 3);
    await drain();

    // The customer: the company's EMAIL template, subject and body exactly.
    const [email, ...moreEmails] = emailsTo(customerEmail);
    assert.equal(moreEmails.length, 0);
    assert.equal(email!.subject, 'Booked with Ann, Bob, Cy (second: Bob)');
    assert.equal(email!.text.replace(/\r\n/g, '\n').trimEnd(), RENDERED_BODY.trimEnd());
    assert.match(email!.fromHeader, /^"?Slotwise Tests"? <no-reply@slotwise\.test>$/, 'From is EMAIL_FROM');
    assert.equal(email!.from, 'no-reply@slotwise.test');
    // No SMS template: the SMS is the EMAIL template's body (trimmed), without the subject.
    const [text, ...moreTexts] = smsTo(customerPhone);
    assert.equal(moreTexts.length, 0);
    assert.equal(text!.body, RENDERED_BODY.trim());
    assert.equal(text!.from, '+15550000000');

    // Each resource and the business: the platform defaults, naming every resource.
    const start = DateTime.fromISO(booked.startTime).setZone(LONDON).setLocale('en-GB');
    const date = start.toFormat('cccc d LLLL yyyy');
    const time = start.toFormat('HH:mm');
    const staffSubject = `Appointment booked: Consult on ${date} at ${time} with Ada Lovelace`;
    const resourceLines = people.map((p) => `- ${p.name} <${p.email}>, ${p.phone}`).join('\n');
    const staffSms = `Booked: Consult ${date} ${time}, Ada Lovelace, with Ann, Bob, Cy at Main.`;
    for (const person of people) {
      const [mail, ...more] = emailsTo(person.email);
      assert.equal(more.length, 0);
      assert.equal(mail!.subject, staffSubject);
      assert.match(mail!.text, /^Hello,\n/);
      assert.ok(mail!.text.includes(`Resources:\n${resourceLines}\n`), mail!.text);
      assert.ok(mail!.text.includes('With: Ann, Bob, Cy'), mail!.text);
      assert.deepEqual(smsTo(person.phone).map((m) => m.body), [staffSms]);
    }
    const [business, ...moreBusiness] = emailsTo(locationEmail);
    assert.equal(moreBusiness.length, 0);
    assert.equal(business!.subject, staffSubject);
    assert.match(business!.text, /^Hello Main team,\n/);
    assert.ok(business!.text.includes(`Customer: Ada Lovelace\nEmail: ${customerEmail}\nPhone: ${customerPhone}\n`), business!.text);
    assert.ok(business!.text.includes(`Resources:\n${resourceLines}\n`), business!.text);
    assert.ok(business!.text.includes(`Appointment id: ${booked.id}`), business!.text);
    assert.deepEqual(smsTo(locationPhone).map((m) => m.body), [staffSms]);

    // The log: every message, sent, as sent.
    const log = await notificationLog(s, { appointmentId: booked.id });
    const expected = [
      ['EMAIL', 'CUSTOMER', customerEmail],
      ['SMS', 'CUSTOMER', customerPhone],
      ...people.flatMap((p) => [
        ['EMAIL', 'RESOURCE', p.email],
        ['SMS', 'RESOURCE', p.phone],
      ]),
      ['EMAIL', 'BUSINESS', locationEmail],
      ['SMS', 'BUSINESS', locationPhone],
    ];
    assert.deepEqual(log.map((row) => [row.channel, row.recipientType, row.recipient]).sort(), expected.sort());
    for (const row of log) {
      assert.equal(row.status, 'sent', JSON.stringify(row));
      assert.equal(row.reason, null);
      assert.ok(row.providerId, JSON.stringify(row));
      assert.equal(row.type, 'APPOINTMENT_BOOKED');
      assert.equal(row.subject === null, row.channel === 'SMS', 'an SMS has no subject');
    }
    const customerRow = log.find((row) => row.channel === 'EMAIL' && row.recipientType === 'CUSTOMER')!;
    assert.equal(customerRow.subject, 'Booked with Ann, Bob, Cy (second: Bob)');
    assert.equal(customerRow.body, RENDERED_BODY);
    assert.equal(log.find((row) => row.channel === 'SMS' && row.recipientType === 'CUSTOMER')!.body, RENDERED_BODY.trim());
    const smsIds = new Set(sms.messages.map((m) => m.sid));
    for (const row of log.filter((r) => r.channel === 'SMS')) assert.ok(smsIds.has(row.providerId!), 'the provider id is the SMS sid');

    // Once the company has an SMS template, the SMS uses it; email keeps its own template.
    await saveTemplate(s, {
      type: 'APPOINTMENT_BOOKED',
      recipientType: 'CUSTOMER',
      channel: 'SMS',
      subject: 'never sent',
      body: '  SMS for {{customer.firstName}}: {{#each resources}}{{name}};{{/each}} first {{resource.name}}, second {{resources.1.name}}  ',
    });
    const second = await create(s, { ...slot(dayAhead(), '12:00'), ResourceIds: s.resourceIds, CustomerId: customer });
    await drain();
    assert.deepEqual(smsTo(customerPhone).map((m) => m.body), [RENDERED_BODY.trim(), 'SMS for Ada: Ann;Bob;Cy; first Ann, second Bob']);
    assert.deepEqual(emailsTo(customerEmail).map((m) => m.subject), ['Booked with Ann, Bob, Cy (second: Bob)', 'Booked with Ann, Bob, Cy (second: Bob)']);
    const secondLog = await notificationLog(s, { appointmentId: second.id });
    assert.equal(secondLog.length, 10);
    assert.ok(secondLog.every((row) => row.status === 'sent'), JSON.stringify(secondLog));
    const customerSms = secondLog.find((row) => row.channel === 'SMS' && row.recipientType === 'CUSTOMER')!;
    assert.equal(customerSms.subject, null);
    assert.equal(customerSms.body, 'SMS for Ada: Ann;Bob;Cy; first Ann, second Bob');

    // Every message of the company is in the log (newest first), sent.
    const all = await notificationLog(s);
    assert.equal(all.length, 20);
    assert.ok(all.every((row) => row.status === 'sent'));
    const order = all.map((row) => row.createdAt);
    assert.deepEqual(order, [...order].sort().reverse());
  });

  test('a company COMBINED service books every resource, and the messages name them all', async () => {
    const tag = unique();
    const s = await setup(context, {
      service: { roundRobin: 'COMBINED' },
      resources: ['Cy', 'Ann', 'Bob'].map((name) => ({ name, email: `${name.toLowerCase()}-c-${tag}@example.com` })),
    });
    await saveTemplate(s, CUSTOMER_EMAIL_TEMPLATE);
    const response = await s.context.app.inject({
      method: 'POST',
      url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
      headers: s.headers,
      payload: { ...slot(dayAhead(), '14:00'), CustomerId: s.customerId },
    });
    assert.equal(response.statusCode, 201, response.body);
    const booked = json<Appointment>(response);
    assert.equal(booked.resourceIds.length, 3);
    await drain();
    const log = await notificationLog(s, { appointmentId: booked.id });
    const customerRow = log.find((row) => row.recipientType === 'CUSTOMER' && row.channel === 'EMAIL')!;
    assert.equal(customerRow.subject, 'Booked with Ann, Bob, Cy (second: Bob)');
    assert.equal(customerRow.body, RENDERED_BODY);
    assert.equal(log.filter((row) => row.recipientType === 'RESOURCE').length, 3);
    assert.ok(log.every((row) => row.status === 'sent'), JSON.stringify(log));
  });

  test('with disableEmailNotifications the emails are recorded not sent, and SMS still go out', async () => {
    const tag = unique();
    const s = await setup(context, { resources: [{ email: `r-${tag}@example.com`, phone: '+15557770001' }] });
    await updateCompany(s, { disableEmailNotifications: true });
    const customerPhone = '+15557770002';
    const customer = await s.tenant.customer({ firstName: 'Flag', email: `flag-${tag}@example.com`, phone: customerPhone });
    const booked = await create(s, { ...slot(dayAhead(), '10:00'), CustomerId: customer });
    await drain();
    const log = await notificationLog(s, { appointmentId: booked.id });
    assert.equal(log.length, 4);
    for (const row of log) {
      if (row.channel === 'EMAIL') {
        assert.equal(row.status, 'not_sent');
        assert.equal(row.reason, 'Email notifications are turned off for this company');
        assert.equal(emailsTo(row.recipient).length, 0);
      } else {
        assert.equal(row.status, 'sent', JSON.stringify(row));
        assert.equal(smsTo(row.recipient).length, 1);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Reminders

describe('reminders', () => {
  const MINUTE = 60_000;
  /** A location open all day every day and a ten-minute service with a slot every ten minutes. */
  const QUICK = { hours: ALWAYS_OPEN, service: { name: 'Quick', duration: 10, bookingInterval: 10 } };
  const tenMinutesAt = (startMs: number) => ({
    Unavailability: { startTime: new Date(startMs).toISOString(), endTime: new Date(startMs + 10 * MINUTE).toISOString() },
  });

  async function reminderSetup(offsets: number[], options: BookableOptions = {}) {
    const s = await setup(context, options);
    await updateCompany(s, { reminderOffsets: offsets });
    const url = receiver.url(`/hook?x=1&reminders=${unique()}`);
    const hook = await createWebhook(s, s.locationId, { url, triggers: ['APPOINTMENT_REMINDER'] });
    return { s, url, hook };
  }

  const reminderHits = (url: string, appointmentId: string) =>
    hitsFor(url, appointmentId).filter((hit) => hit.json.trigger === 'APPOINTMENT_REMINDER');

  test('each offset fires once, when its time comes, to webhooks with APPOINTMENT_REMINDER and as messages', async () => {
    const { s, url, hook } = await reminderSetup([1440, 60]);
    const booked = await create(s, slot(dayAhead(3), '10:00'));
    const start = Date.parse(booked.startTime);

    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [], 'nothing is due yet');

    // A day before (less ten minutes): the 1440 reminder only.
    await scheduleRemindersAt(context, start - 1430 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [1440]);
    assert.equal(reminderHits(url, booked.id).length, 1);

    // Fifty minutes before: the 60 reminder too; and again at the same time, nothing new.
    await scheduleRemindersAt(context, start - 50 * MINUTE);
    await drain();
    await scheduleRemindersAt(context, start - 50 * MINUTE);
    await scheduleRemindersAt(context, start - 40 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [1440, 60]);
    const events = await outboxEvents(context, s.tenant.companyId, booked.id, 'APPOINTMENT_REMINDER');
    assert.equal(events.length, 2, 'one APPOINTMENT_REMINDER event per offset');
    const hits = reminderHits(url, booked.id);
    assert.equal(hits.length, 2);
    for (const hit of hits) {
      assert.equal(hit.json.appointment.id, booked.id);
      assert.equal(hit.json.appointment.status, 'BK');
    }
    const list = await deliveries(s, hook.id);
    assert.deepEqual(list.data.map((d) => [d.trigger, d.outcome]), [
      ['APPOINTMENT_REMINDER', 'delivered'],
      ['APPOINTMENT_REMINDER', 'delivered'],
    ]);
    // The customer is reminded by email, once per offset.
    const log = await notificationLog(s, { appointmentId: booked.id });
    const reminders = log.filter((row) => row.type === 'APPOINTMENT_REMINDER' && row.recipientType === 'CUSTOMER');
    assert.equal(reminders.length, 2);
    for (const row of reminders) {
      assert.equal(row.status, 'sent');
      assert.match(row.subject ?? '', /^Reminder: Consult on /);
    }
  });

  test('booked after start minus 1440 but before start minus 60: exactly one reminder, for 60', async () => {
    // Open all day every day, ten-minute slots: a start 110 to 120 minutes from now exists. Booked
    // now, it is booked after its 1440 reminder time and before its 60 one.
    const { s, url } = await reminderSetup([1440, 60], QUICK);
    const startMs = Math.ceil((Date.now() + 110 * MINUTE) / (10 * MINUTE)) * 10 * MINUTE;
    const booked = await create(s, tenMinutesAt(startMs));

    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [], 'no 1440 reminder: it was booked after that time');
    await scheduleRemindersAt(context, startMs - 55 * MINUTE);
    await drain();
    await scheduleRemindersAt(context, startMs - 5 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [60]);
    assert.equal((await outboxEvents(context, s.tenant.companyId, booked.id, 'APPOINTMENT_REMINDER')).length, 1);
    assert.equal(reminderHits(url, booked.id).length, 1);
  });

  test('an appointment booked inside its reminder windows (start in about 50 minutes) gets no reminder for them', async () => {
    // The dispatcher's rule: "an appointment booked after its reminder time gets no reminder for
    // that offset". Starting in 50 to 59 minutes, it was booked after start-1440 and after start-60.
    const { s, url } = await reminderSetup([1440, 60], QUICK);
    const startMs = Math.ceil((Date.now() + 50 * MINUTE) / (10 * MINUTE)) * 10 * MINUTE;
    const booked = await create(s, tenMinutesAt(startMs));
    await drain();
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), []);
    assert.equal(reminderHits(url, booked.id).length, 0);
  });

  test('a cancelled appointment gets no reminder, a rescheduled one none for its old time', async () => {
    const { s, url } = await reminderSetup([60]);
    const cancelled = await create(s, slot(dayAhead(4), '10:00'));
    assert.equal((await operate(s, cancelled.id, 'cancel')).statusCode, 200);
    const moved = await create(s, slot(dayAhead(4), '12:00'));
    const rescheduled = await operate(s, moved.id, 'reschedule', slot(dayAhead(4), '15:00'));
    assert.equal(rescheduled.statusCode, 200, rescheduled.body);
    const replacement = json<Appointment>(rescheduled);
    await drain();

    await scheduleRemindersAt(context, Date.parse(cancelled.startTime) - 30 * MINUTE);
    await scheduleRemindersAt(context, Date.parse(moved.startTime) - 30 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, cancelled.id), []);
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, moved.id), []);
    assert.equal(reminderHits(url, cancelled.id).length + reminderHits(url, moved.id).length, 0);

    await scheduleRemindersAt(context, Date.parse(replacement.startTime) - 30 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, replacement.id), [60]);
    assert.equal(reminderHits(url, replacement.id).length, 1);
  });

  test("a location's reminderOffsets replace the company's", async () => {
    const { s, url } = await reminderSetup([1440, 60]);
    const location = await updateLocation(s, s.locationId, { reminderOffsets: [30] });
    assert.deepEqual(location.reminderOffsets, [30]);
    const booked = await create(s, slot(dayAhead(5), '10:00'));
    const start = Date.parse(booked.startTime);

    // 45 minutes before: the company's 60 would be due, but the location's list replaces it.
    await scheduleRemindersAt(context, start - 45 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), []);
    await scheduleRemindersAt(context, start - 25 * MINUTE);
    await drain();
    await scheduleRemindersAt(context, start - 10 * MINUTE);
    await drain();
    assert.deepEqual(await reminderOffsets(context, s.tenant.companyId, booked.id), [30]);
    assert.equal(reminderHits(url, booked.id).length, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// Exactly once

describe('exactly once with several dispatchers', () => {
  let second: App;
  before(async () => {
    // A second instance on the same database, as another server process would be.
    const config = { ...context.config, worker: { ...context.config.worker, batchSize: 3 } };
    second = await buildApp({ config, database: context.database, secrets: TEST_SECRETS, redis: context.redis });
  });
  after(async () => {
    await second.close();
  });

  test('two dispatchers draining 30 bookings at once deliver each (event, webhook) and each message exactly once', async () => {
    const tag = unique();
    const s = await setup(context, { service: { duration: 30 }, resources: [{ name: 'R1' }, { name: 'R2' }] });
    const customerEmail = `twice-${tag}@example.com`;
    const customer = await s.tenant.customer({ firstName: 'Once', email: customerEmail });
    await saveTemplate(s, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'EMAIL', subject: 'Booked {{appointment.id}}', body: '{{appointment.id}}' });
    const urls = [receiver.url(`/slow?x=1&a=${tag}`), receiver.url(`/hook?x=1&b=${tag}`)];
    for (const url of urls) await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });

    const bookings = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        create(s, { ...slot(dayAhead(20 + Math.floor(i / 16)), `${String(9 + Math.floor((i % 16) / 2)).padStart(2, '0')}:${i % 2 ? '30' : '00'}`, 30), ResourceIds: [s.resourceIds[i % 2]!], CustomerId: customer }),
      ),
    );
    const ids = bookings.map((b) => b.id).sort();
    assert.equal(new Set(ids).size, 30);

    await Promise.all([context.app.dispatcher.drain(), second.dispatcher.drain(), context.app.dispatcher.drain(), second.dispatcher.drain()]);

    // Exactly once is about attempts: one per (event, webhook) and one per message, none repeated.
    // Whether an attempt succeeds is a matter of speed as well: on a slow enough machine (several
    // runnable jobs per core, this one process hosting the receiver, the SMTP stand-in, both apps
    // and the database) an attempt can outlast its timeout (5 s a webhook, 10 s a mail) and end
    // `failed` with a timeout, reaching the receiver or not, and is never sent again either
    // (Delivery rules 7). So every attempt must be delivered or have timed out; what was delivered
    // arrived; nothing arrived twice.
    const { db } = context.database;
    const timedOut = (error: string | null) => error !== null && /timeout|timed ?out/i.test(error);
    const attempts = () => db.selectFrom('webhookDeliveries').select(['url', 'appointmentId', 'outcome', 'error']).where('companyId', '=', s.tenant.companyId).execute();
    const messages = () => db.selectFrom('notifications').select(['appointmentId', 'status', 'reason']).where('companyId', '=', s.tenant.companyId).where('recipient', '=', customerEmail).execute();
    const checkOnce = (label: string, received: string[], tried: Array<{ appointmentId: string; ok: boolean; error: string | null }>) => {
      assert.deepEqual(tried.map((row) => row.appointmentId).sort(), ids, `${label}: one attempt per appointment`);
      assert.deepEqual(tried.filter((row) => !row.ok && !timedOut(row.error)), [], `${label}: every attempt delivered, or timed out`);
      assert.equal(new Set(received).size, received.length, `${label}: nothing arrived twice`);
      const arrived = new Set(received);
      assert.ok(received.every((id) => ids.includes(id)), `${label}: only these appointments arrived`);
      assert.deepEqual(tried.filter((row) => row.ok && !arrived.has(row.appointmentId)), [], `${label}: what was delivered arrived`);
    };
    /** Appointment ids that reached the receiver at a URL, or the SMTP stand-in (requests cut off before their body are not arrivals). */
    const arrivedAt = (url: string) => receiver.hitsTo(url).flatMap((hit) => (typeof hit.json?.appointment?.id === 'string' ? [hit.json.appointment.id as string] : []));
    const arrivedMail = () => emailsTo(customerEmail).map((m) => m.text.trim());
    const labels = [...urls, 'email'];
    const arrivals = (label: string) => (label === 'email' ? arrivedMail() : arrivedAt(label));
    const checkAll = async () => {
      const rows = await attempts();
      assert.equal(rows.length, 60);
      const tried = new Map<string, Array<{ appointmentId: string; ok: boolean; error: string | null }>>();
      for (const url of urls) tried.set(url, rows.filter((row) => row.url === url).map((row) => ({ appointmentId: row.appointmentId, ok: row.outcome === 'delivered', error: row.error })));
      tried.set('email', (await messages()).map((row) => ({ appointmentId: row.appointmentId, ok: row.status === 'sent', error: row.reason })));
      for (const label of labels) checkOnce(label, arrivals(label), tried.get(label)!);
      return { rows, tried };
    };
    const before = await checkAll();
    const claimedBy = await db.selectFrom('outboxEvents').select(['claimedBy', 'processedAt']).where('companyId', '=', s.tenant.companyId).execute();
    assert.equal(claimedBy.length, 30);
    assert.equal(new Set(claimedBy.map((row) => row.claimedBy)).size, 2, 'both dispatchers took part');
    assert.ok(claimedBy.every((row) => row.processedAt !== null), 'every event was processed');
    const arrivedBefore = new Map(labels.map((label) => [label, new Set(arrivals(label))]));

    // A crash after sending but before the event was marked done: the event is taken over and
    // nothing already attempted is sent again.
    await db.updateTable('outboxEvents').set({ processedAt: null, claimedAt: null, claimedBy: null }).where('companyId', '=', s.tenant.companyId).execute();
    const taken = await second.dispatcher.drain();
    assert.ok(taken >= 30, `the released events were claimed again (${taken})`);
    const after = await checkAll();
    const outcomes = (rows: typeof after.rows) => rows.map((row) => `${row.url} ${row.appointmentId} ${row.outcome}`).sort();
    assert.deepEqual(outcomes(after.rows), outcomes(before.rows), 'no delivery attempted again');
    // Nothing arrived since, but perhaps a timed-out attempt's request that was already on its way.
    for (const label of labels) {
      const timedOutIds = new Set(before.tried.get(label)!.filter((row) => !row.ok).map((row) => row.appointmentId));
      const since = arrivals(label).filter((id) => !arrivedBefore.get(label)!.has(id));
      assert.deepEqual(since.filter((id) => !timedOutIds.has(id)), [], `${label}: nothing repeated`);
    }
  });
});
