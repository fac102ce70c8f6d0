#!/usr/bin/env node
// npm run test:oversubscribed [-- npm test arguments]
//
// Runs `npm test` while the machine is oversubscribed on purpose: OVERSUBSCRIBE_JOBS_PER_CORE
// (default 3) CPU-bound busy loops per core run beside the suite, which itself keeps every core
// busy, so about four runnable jobs compete for each core. A test that passes only when the
// machine is fast (a wall-clock race, a timeout too tight for a slow runner) fails here, not on a
// busy CI machine. It prints the load average while the suite runs and the suite's own result.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { clearInterval, setInterval } from 'node:timers';

const perCore = Number(process.env.OVERSUBSCRIBE_JOBS_PER_CORE ?? '3');
const cores = availableParallelism();
const jobs = Math.max(1, Math.round(perCore * cores));

// Each busy loop leads its own process group, so nothing outlives this script, even on Ctrl-C.
const busy = Array.from({ length: jobs }, () => {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore', detached: true });
  child.unref();
  return child;
});
const stopBusy = () => {
  for (const child of busy) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
};
process.on('exit', stopBusy);
// The suite (run-tests.mjs) ends its own test processes and servers when told to stop.
let suite;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    suite?.kill(signal);
    process.exit(130);
  });
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
console.log(`Oversubscribed run: ${jobs} CPU-bound busy loops (${perCore} per core, ${cores} cores) beside npm test; load average ${load()}.`);
const started = Date.now();
const samples = [];
const sampler = setInterval(() => samples.push(loadavg()[0]), 15_000);
suite = spawn(process.execPath, ['scripts/run-tests.mjs', ...process.argv.slice(2)], { stdio: 'inherit' });
const status = await new Promise((resolve) => suite.once('exit', (code) => resolve(code ?? 1)));
clearInterval(sampler);
// Ended here, not only on 'exit': this process would otherwise wait for its children forever.
stopBusy();
const mean = samples.length ? samples.reduce((a, b) => a + b, 0) / samples.length : loadavg()[0];
console.log(
  `Oversubscribed run finished in ${((Date.now() - started) / 60_000).toFixed(1)} min with exit code ${status}; ` +
    `one-minute load average ${mean.toFixed(1)} on average over the run (${(mean / cores).toFixed(1)} per core).`,
);
process.exitCode = status;
