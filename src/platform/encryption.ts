/**
 * Provider credentials at rest (OAuth tokens, CalDAV passwords, PKCE verifiers): AES-256-GCM with a
 * key derived from CREDENTIAL_ENCRYPTION_SECRET. A stored value is `v1.<keyId>.<iv>.<tag>.<data>`
 * (base64url parts); keyId names the key that sealed it, so keys can rotate:
 * 1. set the new secret as CREDENTIAL_ENCRYPTION_SECRET and the old one in
 *    CREDENTIAL_ENCRYPTION_PREVIOUS_SECRETS (comma-separated) on every instance;
 * 2. run `npm run admin -- reencrypt-credentials` (or wait: every token refresh re-seals);
 * 3. drop the old secret from CREDENTIAL_ENCRYPTION_PREVIOUS_SECRETS.
 * docs/security.md repeats this for operators.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface Sealer {
  seal(plain: string): string;
  /** Throws when the value was sealed by a key this instance does not have, or was altered. */
  open(sealed: string): string;
  /** True when `sealed` was sealed by an older key (re-seal it). */
  isStale(sealed: string): boolean;
}

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(secret: string): Key {
  // The secret is text of any length (at least 32 characters): SHA-256 makes it a 256-bit key.
  const bytes = createHash('sha256').update(`slotwise-credentials:${secret}`).digest();
  const id = createHash('sha256').update(bytes).digest('hex').slice(0, 8);
  return { id, bytes };
}

export function createSealer(currentSecret: string, previousSecrets: string[] = []): Sealer {
  const current = keyOf(currentSecret);
  const keys = new Map<string, Key>([current, ...previousSecrets.map(keyOf)].map((k) => [k.id, k]));
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.bytes, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return ['v1', current.id, iv.toString('base64url'), tag.toString('base64url'), data.toString('base64url')].join('.');
    },
    open(sealed) {
      const [version, keyId, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !keyId || iv === undefined || tag === undefined || data === undefined) throw new Error('not a sealed credential');
      const key = keys.get(keyId);
      if (!key) throw new Error(`credential sealed by an unknown key (${keyId}): is CREDENTIAL_ENCRYPTION_PREVIOUS_SECRETS missing the old secret?`);
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
    isStale(sealed) {
      return sealed.split('.')[1] !== current.id;
    },
  };
}
