/**
 * How a test starts the service's own processes. `npm test` runs the suite from a build
 * (scripts/run-tests.mjs bundles the test files, src/server.ts and the CLI with scripts/build.mjs and
 * sets SLOTWISE_BUILD_DIR), so a spawned server is plain `node` on the built file, as `npm start`
 * runs it. A test file run on its own through tsx (`node --import tsx --test <file>`) spawns the
 * TypeScript sources through tsx instead.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../scripts/build.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_DIR = process.env.SLOTWISE_BUILD_DIR;

function command(source: string, flags: string[] = []): string[] {
  if (BUILD_DIR) return [...flags, join(BUILD_DIR, source.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', ...flags, join(ROOT, source)];
}

/** Arguments for `process.execPath` that run the server (src/server.ts) with npm start's V8 settings. */
export const SERVER_COMMAND = command('src/server.ts', SERVER_NODE_FLAGS);
/** Arguments for `process.execPath` that run the operator CLI (src/cli/admin-main.ts). */
export const ADMIN_COMMAND = command('src/cli/admin-main.ts');
