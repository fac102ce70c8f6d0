// Drill: SIGKILL of one of two instances under booking load, then a restart. Clients whose instance
// died retry on the other with the same Idempotency-Key (as a load balancer's client would). No
// acknowledged booking may be lost, none oversold, and every NEW_APPOINTMENT goes to the webhook
// receiver at most once; attempts the kill cut off are recorded `interrupted`, never repeated.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { WEBHOOK_TEST_ENV, startReceiver } from '../modules/notifications/receiver.js';
import type { Receiver } from '../modules/notifications/receiver.js';
import {
  bookingPath, call, cleanUp, crashed, dedicatedDatabase, figure, instances, load, lostAcknowledged, oversold, restart, shop, sleep, slotAt, statusCounts,
} from './harness.js';
import type { Answer } from './harness.js';

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(async () => {
  await cleanUp();
  await receiver?.close();
});

const serverUrl = process.env.TEST_DATABASE_URL;

test('one of two instances killed with SIGKILL under booking load, then restarted', { skip: serverUrl ? false : 'TEST_DATABASE_URL is not set', timeout: 180_000 }, async () => {
  const databaseUrl = await dedicatedDatabase(serverUrl!);
  const env = { DATABASE_URL: databaseUrl, WORKER_ENABLED: 'true', OUTBOX_POLL_MS: '100', OUTBOX_LEASE_MS: '2000', ...WEBHOOK_TEST_ENV };
  const running = await instances(2, env);
  const hookPath = `/drill?kill=${randomUUID().slice(0, 8)}`;
  const s = await shop(running[0]!.base, { resources: 4, webhookUrl: receiver.url(hookPath) });
  const acknowledged: string[] = [];
  let killedAnswers = 0;
  const loadDone = load(16, 12_000, async (client, n) => {
    const body = { ...slotAt((client * 997 + n * 13) % 4000), ResourceIds: [s.resourceIds[client % 4]], name: `C ${client}`, email: `c${client}-${n}-${randomUUID()}@example.com` };
    const headers = { ...s.headers, 'idempotency-key': randomUUID() };
    let answer: Answer = await call(running[client % 2]!.base, 'POST', bookingPath(s), headers, body);
    // The instance died under this request: the same request, same key, to the other one.
    for (let retry = 0; answer.status === 0 && retry < 20; retry++) {
      killedAnswers++;
      await sleep(50);
      answer = await call(running[(client + 1 + retry) % 2]!.base, 'POST', bookingPath(s), headers, body);
    }
    if (answer.status === 201) acknowledged.push(answer.body.id);
    return answer;
  });
  await sleep(4000);
  const victim = running[0]!;
  victim.child.kill('SIGKILL');
  await victim.exit;
  await sleep(2000);
  running[0] = await restart(victim, env);
  const answers = await loadDone;

  // Let the workers drain the outbox.
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  let pending = -1;
  for (let i = 0; i < 300 && pending !== 0; i++) {
    pending = Number((await admin.query<{ n: string }>('select count(*) as n from outbox_events where processed_at is null')).rows[0]!.n);
    if (pending) await sleep(100);
  }
  const outcomes = (await admin.query<{ outcome: string; n: string }>('select outcome, count(*) as n from webhook_deliveries group by outcome')).rows;
  const events = Number((await admin.query<{ n: string }>("select count(*) as n from outbox_events where trigger = 'NEW_APPOINTMENT'")).rows[0]!.n);
  await admin.end();
  const received = receiver.hitsTo(receiver.url(hookPath)).map((hit) => hit.json?.appointment?.id as string);
  const duplicates = received.length - new Set(received).size;

  figure('SIGKILL one of two instances', 'requests; statuses (after retries)', `${answers.length}; ${JSON.stringify(statusCounts(answers))}`);
  figure('SIGKILL one of two instances', 'requests cut by the kill, retried on the other instance', killedAnswers);
  figure('SIGKILL one of two instances', 'acknowledged bookings; lost', `${acknowledged.length}; ${await lostAcknowledged(databaseUrl, s.companyId, acknowledged)}`);
  figure('SIGKILL one of two instances', 'oversold slots', await oversold(databaseUrl, s));
  figure('SIGKILL one of two instances', 'NEW_APPOINTMENT events; delivered to the receiver; duplicates', `${events}; ${received.length}; ${duplicates}`);
  figure('SIGKILL one of two instances', 'delivery records by outcome', JSON.stringify(Object.fromEntries(outcomes.map((o) => [o.outcome, Number(o.n)]))));
  figure('SIGKILL one of two instances', 'outbox events left unprocessed', pending);
  figure('SIGKILL one of two instances', 'crashes (besides the kill)', crashed(running).length);

  assert.equal(crashed(running).length, 0);
  assert.deepEqual(answers.filter((a) => a.status >= 500 || a.status <= 0).map((a) => `${a.status} ${JSON.stringify(a.body)}`), []);
  assert.equal(await lostAcknowledged(databaseUrl, s.companyId, acknowledged), 0);
  assert.equal(await oversold(databaseUrl, s), 0);
  assert.equal(new Set(acknowledged).size, events, 'one NEW_APPOINTMENT per booking: an Idempotency-Key retry booked nothing twice');
  assert.equal(duplicates, 0, 'no event delivered twice');
  assert.equal(pending, 0, 'every event processed');
  // Each event reached the receiver once, or its attempt was cut off by the kill and says so.
  const interrupted = Number(outcomes.find((o) => o.outcome === 'interrupted')?.n ?? 0);
  assert.ok(new Set(received).size <= events);
  assert.ok(new Set(received).size + interrupted >= events, `${received.length} received, ${interrupted} interrupted, ${events} events`);
});
