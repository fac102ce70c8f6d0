import type { EmailSender } from '../../platform/messaging/email.js';

/** How long setUsers waits for its invitation mails, all sent at once, before answering. */
export const INVITATION_MAIL_DEADLINE_MS = 10_000;

/** `work`'s answer, or `fallback` once `ms` pass (the work goes on, its answer ignored). */
export async function withinDeadline<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface InvitationMail {
  to: string;
  companyName: string;
  token: string;
  baseUrl: string;
  ttlSeconds: number;
}

/** Sends one invitation; true when the mail server took it. */
export async function sendInvitationMail(email: EmailSender, { to, companyName, token, baseUrl, ttlSeconds }: InvitationMail): Promise<boolean> {
  const days = Math.max(1, Math.round(ttlSeconds / 86_400));
  const outcome = await email.send({
    to,
    subject: `You are invited to ${companyName} on Slotwise`,
    text:
      `You have been invited to join ${companyName} on Slotwise.\n\n` +
      `Your invitation token:\n\n${token}\n\n` +
      `Paste it where your Slotwise dashboard asks for it, or send it yourself: ` +
      `POST ${baseUrl}/v3/auth/acceptInvitation with {"token": "<the token>", "password": "<a password for a new account>"}.\n\n` +
      `It can be used once, within ${days} day${days === 1 ? '' : 's'}. If you did not expect this invitation, ignore this message.`,
  });
  return outcome.status === 'sent';
}
