import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { errorCode, fieldOf } from '../values.js';

/**
 * PGlite keeps its whole database in the memory of the process that opened it and writes the
 * folder back; a second process opening the same DATA_DIR works on its own copy, and whichever
 * writes last wins. The issue this prevents: the operator CLI run beside `npm start` printed a new
 * company that was gone once the server stopped. So the folder carries a lock file naming its
 * holder, created exclusively; a lock whose process is gone (a crash, kill -9) is taken over.
 */
export const LOCK_FILE = 'slotwise.lock';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by process ${holder.pid} (${holder.command}, started ${holder.startedAt}${holder.host !== hostname() ? ` on ${holder.host}` : ''}). ` +
        'One process at a time may open an embedded database. Stop that process first, or run PostgreSQL and set DATABASE_URL: ' +
        'then any number of servers and the operator CLI can use the database at once.',
    );
  }
}

export interface LockHolder {
  pid: number;
  command: string;
  host: string;
  startedAt: string;
  /** The process's start time as the kernel counts it (Linux), so a reused pid is not mistaken for the holder. */
  processStart?: string | null;
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot; null off Linux. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function alive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    if (errorCode(error) !== 'EPERM') return false;
  }
  // The pid is in use; by the holder only if it started when the holder did (pids are reused,
  // for example by the next container's first process).
  const now = processStart(holder.pid);
  return !holder.processStart || !now || now === holder.processStart;
}

function readHolder(path: string): LockHolder | null {
  try {
    const holder: unknown = JSON.parse(readFileSync(path, 'utf8'));
    const pid = fieldOf(holder, 'pid');
    const processStart = fieldOf(holder, 'processStart');
    return typeof pid === 'number'
      ? {
          pid,
          command: String(fieldOf(holder, 'command') ?? 'unknown'),
          host: String(fieldOf(holder, 'host') ?? hostname()),
          startedAt: String(fieldOf(holder, 'startedAt') ?? 'unknown'),
          processStart: typeof processStart === 'string' ? processStart : null,
        }
      : null;
  } catch {
    return null;
  }
}

/** Folders this process holds: a second open of the same folder in one process is refused too. */
const heldHere = new Set<string>();

/** Takes the folder's lock or throws DataDirLockedError; returns the function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const me: LockHolder = {
    pid: process.pid,
    command: process.argv.slice(1).join(' ') || process.argv0,
    host: hostname(),
    startedAt: new Date().toISOString(),
    processStart: processStart(process.pid),
  };
  if (heldHere.has(path)) throw new DataDirLockedError(dataDir, me);
  // The lock file appears with its content in one step (written aside, then hard-linked into
  // place, which fails if it exists), so no one ever reads a half-written lock.
  const draft = `${path}.${process.pid}.${randomUUID()}`;
  writeFileSync(draft, JSON.stringify(me));
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(draft, path);
        heldHere.add(path);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          heldHere.delete(path);
          if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true });
        };
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
      }
      const holder = readHolder(path);
      // Another host's pid cannot be checked from here: trust the lock (a shared folder).
      if (holder && (holder.host !== me.host || alive(holder))) throw new DataDirLockedError(dataDir, holder);
      // Stale (its process is gone) or damaged (a lock file always appears with its content, see
      // above): move it aside, atomically, so of two processes taking it over only one succeeds.
      const aside = `${path}.stale.${process.pid}.${randomUUID()}`;
      try {
        renameSync(path, aside);
      } catch {
        continue; // someone else moved it first; look again
      }
      const moved = readHolder(aside);
      if (moved && holder && (moved.pid !== holder.pid || moved.startedAt !== holder.startedAt)) {
        // Between our look and our move another process took the stale lock over: put its lock back.
        try {
          linkSync(aside, path);
        } catch {
          // A third process holds it now; the next look finds that one.
        }
      }
      rmSync(aside, { force: true });
    }
    throw new Error(`Could not take the lock ${path}`);
  } finally {
    rmSync(draft, { force: true });
  }
}
