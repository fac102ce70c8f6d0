import { hash, verify } from '@node-rs/argon2';

// Argon2id with the library's defaults (19 MiB memory, 2 passes), the OWASP baseline.
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

// Verifying against a fixed hash when the user does not exist keeps login timing the same for
// known and unknown emails.
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hash('slotwise-timing-equaliser');
  await verifyPassword(await dummyHash, password);
}
