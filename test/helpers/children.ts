import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';

/**
 * Processes that tests start (servers, the CLI, radicale, tsc). Each leads a process group of its
 * own (`detached`), so ending the group ends whatever it started too. They are ended with SIGKILL:
 * by the test file's own `after` hooks, by the suite runner after each file (scripts/test-shard.mjs
 * calls endChildren, so one file's leftovers never meet the next file's tests), when the process
 * exits, and when it is told to stop (the runner's timeout or CI's sends SIGTERM, Ctrl-C SIGINT),
 * since a detached group would not get those signals itself.
 */
const groups = new Set<ChildProcess>();

let handlersInstalled = false;
function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.once('exit', endChildren);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      endChildren();
      process.exit(1);
    });
  }
}

/** Ends every tracked group still running. */
export function endChildren(): void {
  for (const child of groups) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  groups.clear();
}

/** Tracks a child spawned with `detached: true` until it exits. */
export function track<T extends ChildProcess>(child: T): T {
  installHandlers();
  groups.add(child);
  child.once('exit', () => groups.delete(child));
  return child;
}

/** `spawn` with the child leading a group of its own, tracked as above. */
export function spawnGroup(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return track(spawn(command, args, { ...options, detached: true }));
}
