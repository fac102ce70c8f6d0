import { randomUUID } from 'node:crypto';
import type { PasswordHasher } from '../../platform/auth/passwords.js';
import { sha256 } from '../../platform/crypto.js';
import type { Db } from '../../platform/database/index.js';
import { isUniqueViolation } from '../../platform/database/errors.js';
import { badRequest, conflict, forbidden, unauthorized, validationError } from '../../platform/errors.js';
import { assertUncommonPassword } from '../identity/service.js';
import { memberView } from './membership-changes.js';
import { roleChangeRefusal } from './role-rules.js';
import type { UserRepository } from './repository.js';
import type { AcceptInvitationInput } from './schemas.js';

const INVALID_INVITATION = 'Invalid or expired invitation';


type AcceptRepository = Pick<
  UserRepository,
  'invitationByTokenHash' | 'withLockedMemberships' | 'acceptInvitation' | 'userForInvitation' | 'insertVerifiedUser' | 'resetUnverifiedAccount' | 'upsertMembership' | 'members'
>;

export function createInvitationAcceptance({ repository, passwords }: { repository: AcceptRepository; passwords: PasswordHasher }) {
  /**
   * The account the invitation joins: a new one with the password given, an unproven one taken
   * over (its password reset), or a proven one as it is (no password may be sent for it).
   */
  async function accountFor(trx: Db, email: string, input: AcceptInvitationInput, newHash: string | undefined): Promise<string> {
    const user = await repository.userForInvitation(trx, email);
    if (!user) {
      if (!newHash) throw validationError('body', 'password', 'password is required to create the account');
      const userId = randomUUID();
      // A signup of the same address at the same moment wins the unique email: 409, not a 500.
      await repository.insertVerifiedUser(trx, { id: userId, email, name: input.name ?? email, passwordHash: newHash }).catch((error: unknown) => {
        if (isUniqueViolation(error)) throw conflict('An account with this email was created meanwhile; accept the invitation again to join with it');
        throw error;
      });
      return userId;
    }
    if (!user.emailVerifiedAt && user.passwordHash) {
      if (!newHash) throw validationError('body', 'password', 'password is required: this account never confirmed its email address, so accepting sets a new password');
      await repository.resetUnverifiedAccount(trx, user.id, newHash, input.name);
      return user.id;
    }
    if (newHash) throw validationError('body', 'password', 'An account with this email exists; sign in with its password (it is not changed here)');
    return user.id;
  }

  /**
   * Accepts an invitation with the token mailed to the address, which proves the person reads
   * mail there. A new account is made with the password given; an account that never proved
   * its address is taken over (password reset, every session ended); a proven account keeps
   * its password. The invitation's role still needs someone who may grant it.
   */
  return async function acceptInvitation(input: AcceptInvitationInput) {
    const invitation = await repository.invitationByTokenHash(sha256(input.token));
    if (!invitation || invitation.acceptedAt || invitation.expiresAt.getTime() <= Date.now()) throw unauthorized(INVALID_INVITATION);
    if (invitation.suspendedAt) throw forbidden('Company account is suspended');
    if (input.password !== undefined) assertUncommonPassword(input.password);
    const newHash = input.password !== undefined ? await passwords.hash(input.password) : undefined;
    return repository.withLockedMemberships(invitation.companyId, async (trx, members) => {
      const inviter = members.find((m) => m.userId === invitation.invitedByUserId);
      const refusal = inviter
        ? roleChangeRefusal({ kind: 'dashboard', userId: inviter.userId, role: inviter.role }, { userId: '', currentRole: null }, invitation.role)
        : 'the person who sent it is no longer a user of the company';
      if (refusal) throw forbidden(`This invitation can no longer be accepted: ${refusal}`);
      if (!(await repository.acceptInvitation(trx, invitation.companyId, invitation.id))) throw unauthorized(INVALID_INVITATION);
      const userId = await accountFor(trx, invitation.email, input, newHash);
      if (members.some((m) => m.userId === userId)) throw badRequest('This account is already a user of the company');
      await repository.upsertMembership(trx, invitation.companyId, {
        userId,
        role: invitation.role,
        locationAccessMode: invitation.locationAccessMode,
        allowedLocationIds: invitation.allowedLocationIds,
        linkedResourceId: invitation.linkedResourceId,
      });
      const [row] = await repository.members(trx, invitation.companyId, [userId]);
      return { companyId: invitation.companyId, companyName: invitation.companyName, ...memberView(row!) };
    });
  };
}
