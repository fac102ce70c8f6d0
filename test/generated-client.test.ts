// The typed client package (packages/client) against the app: its generated types match the served
// /openapi.json byte for byte, and through the package an integrator's driver and the ten-line
// example of packages/client/README.md type-check and book appointments end to end.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { SCHEMA_PATH, renderClientSchema } from '../scripts/generate-client.js';
import { createSlotwiseClient } from '../packages/client/src/index.js';
import { createClientCredentials, createTestContext, json } from './helpers/app.js';
import type { TestContext } from './helpers/app.js';
import { spawnGroup } from './helpers/children.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Inside the project, so tsc finds @types/node and the package finds openapi-fetch in its node_modules.
const WORK = join(ROOT, 'node_modules', '.cache', 'slotwise', `generated-client-${randomUUID()}`);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** What an integrator writes against the package: every call below is checked by tsc. */
const DRIVER = `
import { createSlotwiseClient } from '@slotwise/client';
import type { Appointment, AvailableTime } from '@slotwise/client';

export async function bookFirstAppointment(baseUrl: string, clientId: string, clientSecret: string, date: string) {
  const anonymous = createSlotwiseClient({ baseUrl });
  const token = await anonymous.POST('/v3/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read write' },
  });
  if (!token.data) throw new Error('token: ' + JSON.stringify(token.error));
  const api = createSlotwiseClient({ baseUrl, accessToken: token.data.access_token });

  const hours = [{ start: '09:00', end: '17:00' }];
  const location = await api.POST('/v3/location', {
    body: { name: 'Main Street', timezoneName: 'America/New_York', weeklyAvailability: { mon: hours, tue: hours, wed: hours, thu: hours, fri: hours, sat: hours, sun: hours } },
  });
  if (!location.data) throw new Error('location: ' + JSON.stringify(location.error));
  const service = await api.POST('/v3/service', { body: { name: 'Check-up', duration: 60, locationIds: [location.data.id] } });
  if (!service.data) throw new Error('service: ' + JSON.stringify(service.error));
  const resource = await api.POST('/v3/resource', { body: { name: 'Dr. Ann Lee', locationIds: [location.data.id], serviceIds: [service.data.id] } });
  if (!resource.data) throw new Error('resource: ' + JSON.stringify(resource.error));

  const availability = await api.GET('/v3/availability', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id, startDate: date } },
  });
  if (!availability.data) throw new Error('availability: ' + JSON.stringify(availability.error));
  const first: AvailableTime | undefined = availability.data.availableTimes[0];
  if (!first) throw new Error('no free time on ' + date);

  const held = await api.POST('/v3/appointment/hold', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id } },
    body: { Unavailability: { startTime: first.startTime, endTime: first.endTime }, ResourceIds: first.resourceIds },
  });
  if (!held.data) throw new Error('hold: ' + JSON.stringify(held.error));
  const booked = await api.PUT('/v3/appointment/{id}/book', {
    params: { path: { id: held.data.id } },
    body: { name: 'Cara Jones', email: 'cara.jones@example.com', phone: '2125550188' },
  });
  if (!booked.data) throw new Error('book: ' + JSON.stringify(booked.error));
  const appointment: Appointment = booked.data;

  // A refusal comes back typed as the error body.
  const again = await api.POST('/v3/appointment/hold', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id } },
    body: { Unavailability: { startTime: first.startTime, endTime: first.endTime }, ResourceIds: first.resourceIds },
  });
  const refusal: string | undefined = again.error?.code;

  return {
    held: held.data.status, booked: appointment.status, startTime: appointment.startTime, first: first.startTime, refusal,
    customerId: appointment.customerId, locationId: location.data.id, serviceId: service.data.id,
  };
}
`;

/** The README example's free names, handed over by the test before it imports the example. */
const EXAMPLE_INPUTS = `
const inputs = (globalThis as { slotwiseExample?: Record<string, string> }).slotwiseExample ?? {};
const input = (name: string): string => inputs[name] ?? '';
export const baseUrl = input('baseUrl');
export const clientId = input('clientId');
export const clientSecret = input('clientSecret');
export const locationId = input('locationId');
export const serviceId = input('serviceId');
export const date = input('date');
`;

/** The ten-line example, marked in packages/client/README.md and shown again in README.md. */
function readmeExample(path = join('packages', 'client', 'README.md')): string {
  const readme = readFileSync(join(ROOT, path), 'utf8');
  const block = /<!-- client-example:start -->\s*```ts\n([\s\S]*?)```\s*<!-- client-example:end -->/.exec(readme)?.[1];
  assert.ok(block, `the example is marked in ${path}`);
  return block;
}

/** tsc as a child process; async, so the app listening in this process keeps answering meanwhile. */
let running: ReturnType<typeof spawnGroup> | undefined;
function typeCheck(project: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group, also ended on SIGTERM or SIGINT (test/helpers/children.ts).
    const child = spawnGroup(process.execPath, [TSC, '-p', project], { cwd: WORK, stdio: ['ignore', 'pipe', 'pipe'] });
    running = child;
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => {
      running = undefined;
      resolve({ status, output });
    });
  });
}

const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

let context: TestContext;
let baseUrl: string;
before(async () => {
  context = await createTestContext();
  baseUrl = await context.app.listen({ host: '127.0.0.1', port: 0 });
  mkdirSync(join(WORK, 'node_modules', '@slotwise'), { recursive: true });
  // As an installed dependency would be: the driver imports the package by its name.
  symlinkSync(join(ROOT, 'packages', 'client'), join(WORK, 'node_modules', '@slotwise', 'client'), 'dir');
});
after(async () => {
  if (running?.pid) process.kill(-running.pid, 'SIGKILL');
  rmSync(WORK, { recursive: true, force: true });
  await context.close();
});

test('packages/client/src/schema.ts is what the served /openapi.json generates', async () => {
  const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(response.statusCode, 200);
  const expected = await renderClientSchema(json(response));
  const actual = readFileSync(SCHEMA_PATH, 'utf8');
  // No diff of an 11,000-line file: the command that fixes it.
  assert.ok(actual === expected, 'packages/client/src/schema.ts does not match the routes: run npm run client:generate');
});

test('through the package, a driver and the README example type-check and book appointments', async () => {
  assert.equal(readmeExample('README.md'), readmeExample(), 'README.md shows the example of packages/client/README.md');
  writeFileSync(join(WORK, 'driver.ts'), DRIVER);
  writeFileSync(join(WORK, 'inputs.ts'), EXAMPLE_INPUTS);
  writeFileSync(join(WORK, 'example.ts'), `import { baseUrl, clientId, clientSecret, locationId, serviceId, date } from './inputs.js';\n${readmeExample()}`);
  writeFileSync(join(WORK, 'package.json'), JSON.stringify({ type: 'module' }));
  const compilerOptions = { strict: true, noUncheckedIndexedAccess: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true, noEmit: true, types: ['node'] };
  writeFileSync(join(WORK, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['driver.ts', 'example.ts'] }));
  const check = await typeCheck(join(WORK, 'tsconfig.json'));
  assert.equal(check.status, 0, `the client package does not type-check:\n${check.output}`);

  const tenant = await context.world.tenant();
  const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
  // The driver and the README example are TypeScript written at run time: tsx loads them (the suite
  // itself runs from a build, scripts/run-tests.mjs). Imported, not required: the suite's CommonJS
  // bundle would otherwise load tsx's CommonJS entry, whose loader registration cannot find its files.
  const { tsImport } = await import('tsx/esm/api');
  const driver = (await tsImport(pathToFileURL(join(WORK, 'driver.ts')).href, import.meta.url)) as {
    bookFirstAppointment: (base: string, id: string, secret: string, date: string) => Promise<Record<string, unknown>>;
  };
  const result = await driver.bookFirstAppointment(baseUrl, clientId, clientSecret, day(10));
  assert.equal(result.held, 'IN');
  assert.equal(result.booked, 'BK');
  assert.equal(result.startTime, result.first);
  assert.equal(typeof result.customerId, 'string');
  assert.equal(result.refusal, 'BOOKING-105');

  // The README example, verbatim, books the first free time of the next day at the driver's location.
  (globalThis as { slotwiseExample?: Record<string, string> }).slotwiseExample = {
    baseUrl, clientId, clientSecret, locationId: String(result.locationId), serviceId: String(result.serviceId), date: day(11),
  };
  const log = mock.method(console, 'log', () => undefined);
  try {
    await tsImport(pathToFileURL(join(WORK, 'example.ts')).href, import.meta.url);
  } finally {
    log.mock.restore();
  }
  const printed = log.mock.calls.at(-1)?.arguments;
  assert.equal(printed?.[0], 'BK');
  assert.ok(String(printed?.[1]).startsWith(day(11)), String(printed?.[1]));
});

test('the package sends each kind of credential in its own header', async () => {
  const tenant = await context.world.tenant({ allowedDomains: ['book.example.com'] });
  // A dashboard user: the JWT as Bearer plus the API key.
  const mine = await createSlotwiseClient({ baseUrl, accessToken: tenant.userToken, apiKey: tenant.apiKey }).GET('/v3/company');
  assert.equal(mine.response.status, 200, JSON.stringify(mine.error));
  assert.equal(mine.data?.id, tenant.companyId);
  // Without the API key the same JWT is refused, and the refusal is typed as the error body.
  const keyless = await createSlotwiseClient({ baseUrl, accessToken: tenant.userToken }).GET('/v3/company');
  assert.equal(keyless.response.status, 401);
  assert.equal(keyless.error?.success, false);
  // A booking page: the public client id; Origin is the browser's, set by hand here.
  const page = createSlotwiseClient({ baseUrl, clientId: tenant.publicClientId, headers: { origin: 'https://book.example.com' } });
  const shown = await page.GET('/v3/public/company');
  assert.equal(shown.response.status, 200, JSON.stringify(shown.error));
  assert.equal(shown.response.headers.get('access-control-allow-origin'), 'https://book.example.com');
});
