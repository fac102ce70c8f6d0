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
