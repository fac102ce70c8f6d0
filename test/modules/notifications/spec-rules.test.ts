// The Delivery rules of the specification, checked end to end against a real HTTPS receiver, SMTP
// and SMS stand-ins: a reschedule's webhooks and messages, exactly which headers a delivery
// carries (no signature), a stored plain-http webhook refused at delivery time, and who may read
// the notifications log.
//
// The dispatcher claims every company's events in its database, so this file has a database of its
// own (dedicatedDatabase) and its tests run one after another; each drains what it wrote, and
// checks only what belongs to its own tenant, receiver path or appointment ids.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { DateTime } from 'luxon';
import { addMember, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { SmtpStandIn } from '../../helpers/stand-ins.js';
import { LONDON } from '../../helpers/world.js';
import { create, dayAhead, operate, setup, slot } from '../appointments/fixtures.js';
import type { Appointment, Setup } from '../appointments/fixtures.js';
import { RECEIVER_HOST } from './receiver.js';
import type { Receiver } from './receiver.js';
import { BOOKING_TRIGGERS, createWebhook, deliveries, notificationLog, saveTemplate, startDelivering } from './helpers.js';

let context: TestContext;
let receiver: Receiver;
let smtp: SmtpStandIn;
let stop: () => Promise<void>;

before(async () => {
  ({ context, receiver, smtp, close: stop } = await startDelivering());
});
after(() => stop());

const unique = () => randomUUID().slice(0, 8);
const drain = () => context.app.dispatcher.drain();
const emailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

async function customerEmail(s: Setup): Promise<string> {
  const response = await context.app.inject({ method: 'GET', url: `/v3/customer/${s.customerId}`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).email as string;
}

// ---------------------------------------------------------------------------------------------
// Reschedule

describe('a reschedule', () => {
  test('sends NEW_APPOINTMENT, APPOINTMENT_RESCHEDULED (the original, RE) and NEW_APPOINTMENT (the replacement); one booked and one rescheduled email with the new time', async () => {
    const s = await setup(context);
    const email = await customerEmail(s);
    const url = receiver.url(`/hook?x=1&reschedule=${unique()}`);
    const hook = await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT', 'APPOINTMENT_RESCHEDULED'] });
    await saveTemplate(s, {
      type: 'APPOINTMENT_BOOKED',
      recipientType: 'CUSTOMER',
      channel: 'EMAIL',
      subject: 'Booked {{appointment.time}}',
      body: 'Booked [{{appointment.id}}] on {{appointment.date}} at {{appointment.time}}',
    });
    await saveTemplate(s, {
      type: 'APPOINTMENT_RESCHEDULED',
      recipientType: 'CUSTOMER',
      channel: 'EMAIL',
      subject: 'Moved to {{appointment.time}}',
      body: 'Now [{{appointment.id}}] {{appointment.status}} on {{appointment.date}} at {{appointment.time}}-{{appointment.endTime}}',
    });

    const date = dayAhead(6);
    const original = await create(s, slot(date, '10:00'));
    const response = await operate(s, original.id, 'reschedule', slot(date, '15:00'));
    assert.equal(response.statusCode, 200, response.body);
    const replacement = json<Appointment>(response);
    assert.notEqual(replacement.id, original.id);
    assert.equal(replacement.rescheduledFromId, original.id);
    assert.equal(replacement.status, 'BK');
    const afterwards = await context.app.inject({ method: 'GET', url: `/v3/appointment/${original.id}`, headers: s.headers });
    assert.equal(afterwards.statusCode, 200, afterwards.body);
    const rescheduledOriginal = json<Appointment>(afterwards);
    assert.equal(rescheduledOriginal.status, 'RE');
    assert.equal(rescheduledOriginal.rescheduledToId, replacement.id);

    await drain();

    // Webhooks: exactly three POSTs, one per event.
    const hits = receiver.hitsTo(url);
    const seen = hits.map((hit) => [hit.json?.trigger, hit.json?.appointment?.id, hit.json?.appointment?.status]);
    assert.equal(hits.length, 3, JSON.stringify(seen));
    assert.deepEqual(
      [...seen].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      [
        ['APPOINTMENT_RESCHEDULED', original.id, 'RE'],
        ['NEW_APPOINTMENT', original.id, 'BK'],
        ['NEW_APPOINTMENT', replacement.id, 'BK'],
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    for (const hit of hits) {
      assert.equal(hit.method, 'POST');
      assert.deepEqual(Object.keys(hit.json).sort(), ['appointment', 'trigger']);
    }
    const hitOf = (trigger: string, id: string) => hits.find((hit) => hit.json.trigger === trigger && hit.json.appointment.id === id)!;
    // The original's events go out in the order they happened.
    assert.ok(hits.indexOf(hitOf('NEW_APPOINTMENT', original.id)) < hits.indexOf(hitOf('APPOINTMENT_RESCHEDULED', original.id)));
    // Each payload is the appointment as the API answered when the change happened.
    assert.deepEqual(hitOf('NEW_APPOINTMENT', original.id).json.appointment, original);
    assert.deepEqual(hitOf('APPOINTMENT_RESCHEDULED', original.id).json.appointment, rescheduledOriginal);
    assert.deepEqual(hitOf('NEW_APPOINTMENT', replacement.id).json.appointment, replacement);

    const list = await deliveries(s, hook.id);
    assert.equal(list.total, 3);
    assert.deepEqual(list.data.map((d) => [d.trigger, d.appointmentId, d.outcome]).sort(), [
      ['APPOINTMENT_RESCHEDULED', original.id, 'delivered'],
      ['NEW_APPOINTMENT', original.id, 'delivered'],
      ['NEW_APPOINTMENT', replacement.id, 'delivered'],
    ].sort());

    // The customer: one "booked" email for the original, one "rescheduled" email about the new
    // time, and no second "booked" email for the replacement.
    const start = (appointment: Appointment) => DateTime.fromISO(appointment.startTime).setZone(LONDON).setLocale('en-GB');
    const longDate = start(replacement).toFormat('cccc d LLLL yyyy');
    assert.equal(start(original).toFormat('HH:mm'), '10:00');
    assert.equal(start(replacement).toFormat('HH:mm'), '15:00');
    const mails = emailsTo(email);
    assert.deepEqual(
      mails.map((m) => [m.subject, m.text.replace(/\r\n/g, '\n').trim()]),
      [
        ['Booked 10:00', `Booked [${original.id}] on ${longDate} at 10:00`],
        ['Moved to 15:00', `Now [${replacement.id}] BK on ${longDate} at 15:00-16:00`],
      ],
    );
    const rescheduledText = mails[1]!.text;
    assert.ok(rescheduledText.includes('15:00') && !rescheduledText.includes('10:00'), rescheduledText);

    // The log agrees: both messages belong to the original's events; none to the replacement's.
    const log = await notificationLog(s, { appointmentId: original.id });
    assert.deepEqual(log.map((row) => [row.type, row.channel, row.recipientType, row.recipient, row.status]).sort(), [
      ['APPOINTMENT_BOOKED', 'EMAIL', 'CUSTOMER', email, 'sent'],
      ['APPOINTMENT_RESCHEDULED', 'EMAIL', 'CUSTOMER', email, 'sent'],
    ]);
    assert.deepEqual(await notificationLog(s, { appointmentId: replacement.id }), []);
    assert.equal((await notificationLog(s)).length, 2, 'nothing else was built for the company');
  });
});

// ---------------------------------------------------------------------------------------------
// Delivery rules 1 and 9: the request's headers

describe('the headers of a delivery', () => {
  // What undici itself adds to a POST with a string body (pinned by inspection: host, connection
  // keep-alive and content-length; no transfer-encoding, no accept, no accept-encoding).
  const TRANSPORT = ['connection', 'content-length', 'host'];

  test('are exactly content-type, user-agent and the configured ones, plus transport headers; no signature', async () => {
    const s = await setup(context);
    const url = receiver.url(`/hook?x=1&headers=${unique()}`);
    const configured = { 'X-Shared-Secret': 'not-a-signature-just-a-secret', Authorization: 'Bearer shared-token' };
    await createWebhook(s, s.locationId, { url, headers: configured, triggers: BOOKING_TRIGGERS });
    const booked = await create(s, slot(dayAhead(7), '10:00'));
    assert.equal((await operate(s, booked.id, 'cancel')).statusCode, 200);
    await drain();

    const hits = receiver.hitsTo(url);
    assert.deepEqual(hits.map((hit) => hit.json.trigger), ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED']);
    for (const hit of hits) {
      const names = Object.keys(hit.headers).sort();
      assert.ok(!names.some((name) => name.includes('signature')), `no signature header: ${names.join(', ')}`);
      assert.deepEqual(names, [...TRANSPORT, 'authorization', 'content-type', 'user-agent', 'x-shared-secret'].sort());
      assert.deepEqual(
        names.filter((name) => !TRANSPORT.includes(name)),
        ['authorization', 'content-type', 'user-agent', 'x-shared-secret'],
      );
      assert.equal(hit.headers['content-type'], 'application/json');
      assert.equal(hit.headers['user-agent'], 'Slotwise-Webhooks/1');
      assert.equal(hit.headers['x-shared-secret'], configured['X-Shared-Secret']);
      assert.equal(hit.headers.authorization, configured.Authorization);
      assert.equal(hit.headers.host, `${RECEIVER_HOST}:${receiver.port}`);
      assert.equal(hit.headers.connection, 'keep-alive');
      assert.equal(hit.headers['content-length'], String(Buffer.byteLength(hit.body)));
      // The body is the JSON of {appointment, trigger} and nothing else.
      assert.deepEqual(Object.keys(hit.json).sort(), ['appointment', 'trigger']);
    }
  });

  test('without configured headers: only content-type, user-agent and transport headers', async () => {
    const s = await setup(context);
    const url = receiver.url(`/hook?x=1&bare=${unique()}`);
    await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });
    await create(s, slot(dayAhead(7), '11:00'));
    await drain();
    const [hit, ...more] = receiver.hitsTo(url);
    assert.equal(more.length, 0);
    assert.deepEqual(Object.keys(hit!.headers).sort(), [...TRANSPORT, 'content-type', 'user-agent'].sort());
  });
});

// ---------------------------------------------------------------------------------------------
// Delivery rule 4 at delivery time

describe('a stored plain-http webhook', () => {
  let listener: NetServer;
  let connections = 0;
  before(async () => {
    // Where the http:// URL points: any TCP connection at all would count as contacting it.
    listener = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(0, '127.0.0.1', () => resolve());
    });
  });
  after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  test('is refused at delivery time: a failed delivery with a refused error, and nothing is contacted', async () => {
    const s = await setup(context);
    const port = (listener.address() as AddressInfo).port;
    const tag = unique();
    const plainUrl = `http://${RECEIVER_HOST}:${port}/legacy?x=${tag}`;
    const httpsTwinUrl = `http://${RECEIVER_HOST}:${receiver.port}/legacy-https-port?x=${tag}`;
    const ids: string[] = [];
    for (const rowUrl of [plainUrl, httpsTwinUrl]) {
      const id = randomUUID();
      await context.database.db
        .insertInto('webhooks')
        .values({
          companyId: s.tenant.companyId,
          id,
          locationId: s.locationId,
          url: rowUrl,
          headers: JSON.stringify({}),
          triggers: ['NEW_APPOINTMENT'],
          active: true,
        })
        .execute();
      ids.push(id);
    }
    const hitsBefore = receiver.hits.length;

    const booked = await create(s, slot(dayAhead(8), '10:00'));
    await drain();

    for (const [index, id] of ids.entries()) {
      const list = await deliveries(s, id);
      assert.equal(list.total, 1, JSON.stringify(list));
      const [delivery] = list.data;
      assert.equal(delivery!.outcome, 'failed', JSON.stringify(delivery));
      assert.match(delivery!.error ?? '', /^refused/);
      assert.equal(delivery!.statusCode, null);
      assert.equal(delivery!.address, null, 'no address was chosen');
      assert.equal(delivery!.url, index === 0 ? plainUrl : httpsTwinUrl);
      assert.equal(delivery!.appointmentId, booked.id);
      assert.equal(delivery!.trigger, 'NEW_APPOINTMENT');
      assert.ok(delivery!.finishedAt);
    }
    assert.equal(connections, 0, 'the http listener was never connected to');
    assert.equal(receiver.hits.length, hitsBefore, 'the HTTPS receiver got nothing either');
    assert.equal(receiver.hits.filter((hit) => hit.json?.appointment?.id === booked.id).length, 0);

    // Sent once, never retried.
    await drain();
    for (const id of ids) assert.equal((await deliveries(s, id)).total, 1);
    assert.equal(connections, 0);
  });
});

// ---------------------------------------------------------------------------------------------
// GET /v3/notifications: who may read it

describe('GET /v3/notifications', () => {
  test('a Resource-role member gets 403; a machine token with read scope gets 200', async () => {
    const tenant = await context.world.tenant();
    const s = await setup(context, { tenant });
    const booked = await create(s, slot(dayAhead(9), '10:00'));
    await drain();
    const path = `/v3/notifications?appointmentId=${booked.id}`;
    const asOwner = await context.app.inject({ method: 'GET', url: path, headers: s.headers });
    assert.equal(asOwner.statusCode, 200, asOwner.body);
    const ownerView = json(asOwner);
    assert.ok(ownerView.total >= 1, asOwner.body);

    const resource = await addMember(context, tenant, 'Resource');
    await context.database.db
      .updateTable('companyUsers')
      .set({ linkedResourceId: s.resourceIds[0]! })
      .where('userId', '=', resource.userId)
      .where('companyId', '=', tenant.companyId)
      .execute();
    // The member is signed in and in the company: it reads its own resource.
    const own = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}`, headers: resource.headers });
    assert.equal(own.statusCode, 200, own.body);
    for (const url of [path, '/v3/notifications']) {
      const refused = await context.app.inject({ method: 'GET', url, headers: resource.headers });
      assert.equal(refused.statusCode, 403, refused.body);
      assert.match(json(refused).message, /role/i);
    }

    const token = await machineToken(context.app, tenant, 'read');
    const asMachine = await context.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${token}` } });
    assert.equal(asMachine.statusCode, 200, asMachine.body);
    assert.deepEqual(json(asMachine), ownerView);
  });
});
