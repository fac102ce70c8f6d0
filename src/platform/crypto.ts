import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 in hex. Used for high-entropy random secrets (API keys, client secrets), where a slow
 * password hash adds nothing and a fast, indexable digest allows lookup by the secret itself. */
export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A random credential such as `swk_3q...`: a readable prefix says what it is, 32 random bytes say nothing. */
export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}
