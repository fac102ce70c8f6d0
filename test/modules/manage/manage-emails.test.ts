// The customer's emails carry the manage link and the calendar entry (.ics): booked and rescheduled
// as METHOD:REQUEST, cancelled as METHOD:CANCEL, one UID for the whole reschedule chain with a
// rising SEQUENCE. Email goes to a real SMTP server on this machine (test/helpers/stand-ins.ts).
//
// The dispatcher claims every company's events in its database, so this file has a database of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { SmtpStandIn } from '../../helpers/stand-ins.js';
import { create, dayAhead, operate, setup, slot } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';
import { startDelivering } from '../notifications/helpers.js';

const BASE = 'https://book.example.test';
let context: TestContext;
let smtp: SmtpStandIn;
let stop: () => Promise<void>;

before(async () => {
  ({ context, smtp, close: stop } = await startDelivering({ PUBLIC_BASE_URL: `${BASE}/` }));
});
after(() => stop());

const drain = () => context.app.dispatcher.drain();

async function customerEmail(s: Setup): Promise<string> {
  const row = await context.database.db.selectFrom('customers').select('email').where('companyId', '=', s.tenant.companyId).where('id', '=', s.customerId).executeTakeFirstOrThrow();
  return row.email;
}

/** The customer's emails so far, parsed (attachments included). */
async function inbox(address: string) {
  const received = smtp.messages.filter((m) => m.to.includes(address));
  return Promise.all(received.map(async (m) => ({ subject: m.subject, text: m.text, parsed: await simpleParser(m.raw) })));
}

function calendarOf(message: Awaited<ReturnType<typeof inbox>>[number]): string {
  const files = message.parsed.attachments.filter((a) => a.contentType === 'text/calendar');
  assert.equal(files.length, 1, `one .ics in "${message.subject}"`);
  return files[0]!.content.toString('utf8').replace(/\r\n[ \t]/g, '');
}

const line = (ics: string, name: string) => new RegExp(`^${name}[:;](.*)$`, 'm').exec(ics)?.[1];
const icsTime = (iso: string) => new Date(iso).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
const manageLink = (text: string) => new RegExp(`${BASE}/manage/([A-Za-z0-9_.-]+)`).exec(text)?.[1];

test('booked: the customer email has the manage link and an invite.ics with the times; staff emails have neither link nor file', async () => {
  const s = await setup(context);
  await context.database.db.updateTable('resources').set({ email: 'resource@example.test' }).where('companyId', '=', s.tenant.companyId).execute();
  const address = await customerEmail(s);
  const booked = await create(s, slot(dayAhead(), '10:00'));
  await drain();

  const [email] = await inbox(address);
  assert.ok(email, 'the customer got the confirmation');
  const token = manageLink(email.text);
  assert.ok(token, email.text);
  assert.match(email.text, new RegExp(`See, reschedule or cancel your appointment: ${BASE}/manage/`));
  const view = await context.app.inject({ method: 'GET', url: '/v3/manage/appointment', headers: { authorization: `Bearer ${token}` } });
  assert.equal(view.statusCode, 200, view.body);
  assert.equal(json(view).id, booked.id);

  const ics = calendarOf(email);
  assert.equal(line(ics, 'METHOD'), 'REQUEST');
  assert.equal(line(ics, 'UID'), `${booked.id}@slotwise`);
  assert.equal(line(ics, 'SEQUENCE'), '0');
  assert.equal(line(ics, 'DTSTART'), icsTime(booked.startTime));
  assert.equal(line(ics, 'DTEND'), icsTime(booked.endTime));
  assert.equal(line(ics, 'STATUS'), 'CONFIRMED');
  assert.ok(ics.includes(`${BASE}/manage/${token}`), 'the entry links to the manage page');

  const staff = smtp.messages.filter((m) => m.to.includes('resource@example.test'));
  assert.equal(staff.length, 1);
  assert.doesNotMatch(staff[0]!.text, /\/manage\//);
  assert.equal((await simpleParser(staff[0]!.raw)).attachments.length, 0);
});

test('rescheduled through the link: a REQUEST of the same UID with SEQUENCE 1 and the new times, a new link; cancelled: CANCEL of that UID', async () => {
  const s = await setup(context);
  const address = await customerEmail(s);
  const booked = await create(s, slot(dayAhead(), '11:00'));
  await drain();
  const firstToken = manageLink((await inbox(address))[0]!.text)!;

  const moved = await context.app.inject({ method: 'POST', url: '/v3/manage/appointment/reschedule', headers: { authorization: `Bearer ${firstToken}` }, payload: slot(dayAhead(15), '14:00') });
  assert.equal(moved.statusCode, 200, moved.body);
  const replacement = json(moved).appointment;
  await drain();
  const afterMove = await inbox(address);
  assert.equal(afterMove.length, 2, afterMove.map((m) => m.subject).join(' | '));
  const rescheduled = afterMove[1]!;
  assert.match(rescheduled.subject, /rescheduled/i);
  const secondToken = manageLink(rescheduled.text);
  assert.ok(secondToken && secondToken !== firstToken, 'the new time has its own link');
  const request = calendarOf(rescheduled);
  assert.equal(line(request, 'METHOD'), 'REQUEST');
  assert.equal(line(request, 'UID'), `${booked.id}@slotwise`, 'the calendar moves the entry it has');
  assert.equal(line(request, 'SEQUENCE'), '1');
  assert.equal(line(request, 'DTSTART'), icsTime(replacement.startTime));
  assert.equal((await context.app.inject({ method: 'GET', url: '/v3/manage/appointment', headers: { authorization: `Bearer ${firstToken}` } })).statusCode, 410);

  const cancelled = await context.app.inject({ method: 'POST', url: '/v3/manage/appointment/cancel', headers: { authorization: `Bearer ${secondToken}` } });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  await drain();
  const afterCancel = await inbox(address);
  assert.equal(afterCancel.length, 3);
  const cancellation = afterCancel[2]!;
  assert.match(cancellation.subject, /cancelled/i);
  assert.doesNotMatch(cancellation.text, /\/manage\//, 'a cancelled appointment has no link to offer');
  const cancel = calendarOf(cancellation);
  assert.equal(line(cancel, 'METHOD'), 'CANCEL');
  assert.equal(line(cancel, 'UID'), `${booked.id}@slotwise`);
  assert.equal(line(cancel, 'SEQUENCE'), '2');
  assert.equal(line(cancel, 'STATUS'), 'CANCELLED');
  assert.equal(line(cancel, 'DTSTART'), icsTime(replacement.startTime));
});

test('a cancel by the company sends the customer the CANCEL too', async () => {
  const s = await setup(context);
  const address = await customerEmail(s);
  const booked = await create(s, slot(dayAhead(), '15:00'));
  const response = await operate(s, booked.id, 'cancel');
  assert.equal(response.statusCode, 200, response.body);
  await drain();
  const emails = await inbox(address);
  assert.equal(emails.length, 2);
  const cancel = calendarOf(emails[1]!);
  assert.equal(line(cancel, 'METHOD'), 'CANCEL');
  assert.equal(line(cancel, 'UID'), `${booked.id}@slotwise`);
  assert.equal(line(cancel, 'SEQUENCE'), '1');
});
