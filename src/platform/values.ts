/**
 * Reading values whose shape TypeScript cannot know (thrown errors, parsed JSON, request bodies
 * before their schema): checked at run time instead of asserted with `as`.
 */

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A property of any value: undefined unless the value is an object that has it. */
export function fieldOf(value: unknown, name: PropertyKey): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
}

/** The `code` of a thrown value (a SQLSTATE, or a Node.js code such as EEXIST), when it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = fieldOf(error, 'code');
  return typeof code === 'string' ? code : undefined;
}

/** The message of whatever was thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
