import { hash, verify } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import { ApiError } from '../errors.js';
import { AdmissionGate, AdmissionRefused } from '../rate-limit/admission.js';

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

/**
 * The ~49,000 most common passwords of zxcvbn's dictionary (@zxcvbn-ts/language-common, kept up
 * to date there), lowercased. Length alone lets "password1" and "qwertyuiop" through.
 */
let commonPasswords: Set<string> | undefined;
export function isCommonPassword(password: string): boolean {
  // The package types its dictionaries loosely; this one is a list of words.
  commonPasswords ??= new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));
  return commonPasswords.has(password.toLowerCase());
}

export const COMMON_PASSWORD_MESSAGE = 'This password is one of the most common passwords; choose another';

export interface PasswordWorkLimits {
  /** Argon2 hashes computed at once by this instance. */
  concurrency: number;
  /** Hashes that may wait; beyond it the request is refused at once (429). */
  queue: number;
  /** Longest wait for a turn before the request is refused (429). */
  maxWaitMs: number;
}

export const PASSWORD_BUSY_MESSAGE = 'Sign-in rate limit exceeded: too many password checks in progress, try again shortly';

/**
 * Argon2 costs tens of milliseconds of CPU and 19 MiB per hash. Every hash and check goes through
 * one gate per instance, so a flood of sign-ins waits its turn (or is refused with 429) instead of
 * starving every other request of CPU and memory.
 */
export function createPasswordHasher(limits: PasswordWorkLimits) {
  const gate = new AdmissionGate({ concurrency: limits.concurrency, companyConcurrency: limits.concurrency, queue: limits.queue, maxWaitMs: limits.maxWaitMs });
  async function gated<T>(work: () => Promise<T>): Promise<T> {
    let release;
    try {
      release = await gate.acquire('argon2');
    } catch (error) {
      if (error instanceof AdmissionRefused) throw new ApiError(429, PASSWORD_BUSY_MESSAGE, [], undefined, { 'Retry-After': '1' });
      throw error;
    }
    try {
      return await work();
    } finally {
      release();
    }
  }
  return {
    hash: (password: string) => gated(() => hashPassword(password)),
    verify: (passwordHash: string, password: string) => gated(() => verifyPassword(passwordHash, password)),
    burn: (password: string) => gated(() => burnPasswordCheck(password)),
    get stats() {
      return gate.stats;
    },
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;
