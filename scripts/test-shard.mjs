// A test process that runs many test files, one after another (scripts/run-tests.mjs starts one
// per core). Most of what a test process costs is the same for every file: loading the app's code,
// compiling its schemas, PGlite's WebAssembly. Paid once per process instead of once per file, the
// suite takes a fraction of the CPU time.
//
// Each file runs inside a `describe` named by its path, so its top-level `test`, `before` and
// `after` belong to that suite: its hooks run around its own tests only, and a failure is reported
// under the file's name. The files come from scripts/build.mjs buildSuiteBundle, whose `files[path]()`
// runs a file's module body synchronously (see there why it must be synchronous).
//
// The processes take files from one queue (a folder: a file is claimed by creating `<index>.claimed`
// in it, which only one process can do), in the order run-tests.mjs wrote, longest first: a process
// that finishes early takes the next file instead of waiting for a fixed share of its own. A file
// that needs a process of its own runs alone, the same way (`run({ only })`).
import { createRequire } from 'node:module';
import { after, describe } from 'node:test';
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuUsage, hrtime } from 'node:process';

// The suite bundle is CommonJS, loaded with `require` (see buildSuiteBundle).
const require = createRequire(import.meta.url);

const queue = process.env.SLOTWISE_TEST_QUEUE;
const suite = process.env.SLOTWISE_TEST_SUITE;
const timeout = Number(process.env.SLOTWISE_TEST_FILE_TIMEOUT_MS ?? 300_000);
// Under --test-only a describe that is not `only` is skipped whole, `test.only` inside it too.
const testOnly = process.env.SLOTWISE_TEST_ONLY === '1';

/** The next file of the queue, or undefined when every one has been claimed. */
function queueReader() {
  const order = JSON.parse(readFileSync(join(queue, 'files.json'), 'utf8'));
  // Every index before `next` has been claimed, by this process or another.
  let next = 0;
  return () => {
    for (; next < order.length; next++) {
      try {
        closeSync(openSync(join(queue, `${next}.claimed`), 'wx'));
        return order[next++];
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
    }
    return undefined;
  };
}

/** Each file's wall and CPU milliseconds, for the next run's order (run-tests.mjs keeps them). */
function record(file, wallStart, cpuStart) {
  const wallMs = Number(hrtime.bigint() - wallStart) / 1e6;
  const cpu = cpuUsage(cpuStart);
  appendFileSync(join(queue, 'timings.jsonl'), `${JSON.stringify({ file, wallMs: Math.round(wallMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000), pid: process.pid })}\n`);
}

/** Runs the queue's files, or only `only`. */
export async function run({ only } = {}) {
  if (!queue || !suite) throw new Error('scripts/test-shard.mjs runs under scripts/run-tests.mjs (SLOTWISE_TEST_QUEUE and SLOTWISE_TEST_SUITE)');
  const { files, afterEachFile } = require(suite);
  let taken = false;
  const next = only ? () => (taken ? undefined : ((taken = true), only)) : queueReader();
  for (let file = next(); file !== undefined; file = next()) {
    const wallStart = hrtime.bigint();
    const cpuStart = cpuUsage();
    // Resolves when the file's tests and its after hooks are done. Past the timeout, the file's
    // tests still running are cancelled (reported as failures) and its after hooks run.
    await describe(file, { timeout, ...(testOnly ? { only: true } : {}) }, () => {
      files[file]();
      // After the file's own after hooks (hooks run in the order they were added).
      if (afterEachFile) after(afterEachFile);
    });
    record(file, wallStart, cpuStart);
  }
}
