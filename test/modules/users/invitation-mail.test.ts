// setUsers answers after its commit within one deadline for all its invitation mails together: an
// SMTP server that never answers cannot hold the request, and the mails it held say emailSent false.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { createUserService } from '../../../src/modules/users/service.js';
import { createUserRepository } from '../../../src/modules/users/repository.js';
import { createPasswordHasher } from '../../../src/platform/auth/passwords.js';
import type { EmailSender } from '../../../src/platform/messaging/email.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

test('ten invitations to an SMTP server that never answers: setUsers answers at the deadline, every invitation made, none sent', async () => {
  const tenant = await context.world.tenant();
  let attempts = 0;
  const hanging: EmailSender = {
    configured: true,
    send: () => {
      attempts++;
      return new Promise(() => {});
    },
    close() {},
  };
  const users = createUserService({
    db: context.database.db,
    repository: createUserRepository(context.database.db),
    passwords: createPasswordHasher(context.config.security.passwordWork),
    email: hanging,
    invitationTtlSeconds: 3600,
    invitationMailDeadlineMs: 50,
  });
  const principal = { kind: 'dashboard' as const, companyId: tenant.companyId, userId: tenant.userId, role: 'Owner' as const, locationAccessMode: 'COMPANY' as const, allowedLocationIds: [], linkedResourceId: null };
  const emails = Array.from({ length: 10 }, () => uniqueEmail('invitee'));
  const answer = await users.setUsers(principal, emails.map((email) => ({ email, role: 'User' as const })), 'https://api.example.test');
  assert.equal(attempts, 10, 'the mails are sent together, not one after another');
  assert.deepEqual(answer.invitations.map((i) => [i.email, i.emailSent]), emails.map((email) => [email, false]));
  const stored = await context.database.db.selectFrom('invitations').select('email').where('companyId', '=', tenant.companyId).execute();
  assert.equal(stored.length, 10, 'the invitations were committed');
});

test('a setUsers transaction retried after a deadlock mails and answers only the invitations of the attempt that committed', async () => {
  const tenant = await context.world.tenant();
  const sent: string[] = [];
  const recording: EmailSender = {
    configured: true,
    send: async (message) => {
      sent.push(message.to);
      return { status: 'sent', providerId: 'id' };
    },
    close() {},
  };
  // The first attempt fails as PostgreSQL fails a deadlock victim, after its invitation is written.
  const repository = createUserRepository(context.database.db);
  let failures = 1;
  const flaky = {
    ...repository,
    async companyName(...args: Parameters<typeof repository.companyName>) {
      if (failures-- > 0) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return repository.companyName(...args);
    },
  };
  const users = createUserService({
    db: context.database.db,
    repository: flaky,
    passwords: createPasswordHasher(context.config.security.passwordWork),
    email: recording,
    invitationTtlSeconds: 3600,
  });
  const principal = { kind: 'dashboard' as const, companyId: tenant.companyId, userId: tenant.userId, role: 'Owner' as const, locationAccessMode: 'COMPANY' as const, allowedLocationIds: [], linkedResourceId: null };
  const email = uniqueEmail('invitee');
  const answer = await users.setUsers(principal, [{ email, role: 'User' }], 'https://api.example.test');
  const stored = await context.database.db.selectFrom('invitations').select('id').where('companyId', '=', tenant.companyId).execute();
  assert.equal(failures, -1, 'the transaction ran twice');
  assert.deepEqual(answer.invitations.map((i) => i.id), stored.map((row) => row.id), 'the answer names exactly the stored invitation');
  assert.deepEqual(sent, [email], 'one mail, for the committed invitation');
});
