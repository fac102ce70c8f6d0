import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

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
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): LockHolder | null {
  try {
    const holder = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    return typeof holder.pid === 'number' ? { pid: holder.pid, command: String(holder.command ?? 'unknown'), host: String(holder.host ?? hostname()), startedAt: String(holder.startedAt ?? 'unknown') } : null;
  } catch {
    return null;
  }
}

/** Takes the folder's lock or throws DataDirLockedError; returns the function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const me: LockHolder = { pid: process.pid, command: process.argv.slice(1).join(' ') || process.argv0, host: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(path);
      // Another host's pid cannot be checked from here: trust the lock (a shared folder).
      if (holder && holder.pid !== process.pid && (holder.host !== me.host || alive(holder.pid))) throw new DataDirLockedError(dataDir, holder);
      // Stale (its process is gone) or unreadable (a crash while writing it): take it over.
      try {
        unlinkSync(path);
      } catch {
        // Someone else removed it first; try again.
      }
      continue;
    }
    writeSync(fd, JSON.stringify(me));
    closeSync(fd);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (readHolder(path)?.pid === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // Already gone.
        }
      }
    };
  }
  throw new Error(`Could not take the lock ${path}`);
}
