/**
 * `npm run admin -- <command>`: the operator CLI's entry (the commands are in ./admin.ts, which
 * tests import without running). A file of its own because in a bundle (scripts/build.mjs) a
 * module cannot tell whether it was the one executed.
 */
import { EXIT_CODES, main } from './admin.js';
import { errorMessage } from '../platform/values.js';

main().catch((error) => {
  process.stderr.write(`error: ${errorMessage(error)}\n`);
  process.exit(EXIT_CODES.failed);
});
