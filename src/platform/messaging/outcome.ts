/**
 * What one attempt to hand a message to a provider came to. Shared by the email and SMS senders so
 * the notifications log can record either the same way.
 *
 * - `sent`: the provider accepted the message; `providerId` is its identifier there when known.
 * - `not_sent`: nothing was attempted (the channel is not configured); `reason` says what is missing.
 * - `failed`: an attempt was made and did not succeed (unreachable, timed out, refused, rejected).
 *
 * A `reason` never contains credentials, and is short enough to store and show to a company.
 */
export type SendOutcome =
  | { status: 'sent'; providerId: string | null }
  | { status: 'not_sent'; reason: string }
  | { status: 'failed'; reason: string };

/** Longest reason kept; providers can answer with whole paragraphs. */
export const MAX_REASON_LENGTH = 500;

/**
 * Makes provider text fit for a stored reason: every secret (and its URL-encoded and base64 forms,
 * which SMTP AUTH uses on the wire) replaced by `[redacted]`, whitespace runs collapsed to one space,
 * and the result cut to MAX_REASON_LENGTH characters.
 */
export function cleanReason(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(Buffer.from(secret, 'utf8').toString('base64'));
  }
  // Longest first, so a secret that contains another is removed whole.
  let cleaned = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) cleaned = cleaned.split(form).join('[redacted]');
  cleaned = cleaned.replace(/\s+/g, ' ').trim();
  return cleaned.length > MAX_REASON_LENGTH ? `${cleaned.slice(0, MAX_REASON_LENGTH - 1)}…` : cleaned;
}
