/**
 * The background loop of one instance: runs a pass of the outbox dispatcher every `pollMs`, right
 * away again while passes find work, and never two passes at once. A failing pass is logged and the
 * loop goes on, backing off while passes keep failing; `stop` waits for the pass in flight, so shutdown never cuts a delivery in half.
 */
export interface OutboxWorker {
  stop(): Promise<void>;
  /** Asks for a pass as soon as the current one ends (after a booking, for example). */
  kick(): void;
}

export const MAX_BACKOFF_MS = 10_000;

/**
 * The wait after `failures` failed passes in a row: pollMs doubled each time, at most
 * MAX_BACKOFF_MS, and never less than pollMs itself (a loop that passes once an hour, like a
 * long EMBEDDED_UPKEEP_SECONDS, is not retried every 10 s when it fails).
 */
export function backoffMs(pollMs: number, failures: number): number {
  return Math.min(Math.max(MAX_BACKOFF_MS, pollMs), pollMs * 2 ** Math.min(failures, 20));
}

export function startOutboxWorker(options: {
  pollMs: number;
  pass: () => Promise<{ reminders: number; events: number }>;
  onError: (error: unknown) => void;
}): OutboxWorker {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  // Consecutive failed passes (the database away, say): each doubles the wait, up to
  // MAX_BACKOFF_MS, so a down database is not hammered; one good pass resets it.
  let failures = 0;

  const schedule = (delay: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, delay);
    timer.unref();
  };

  function run() {
    if (stopped || running) return;
    running = (async () => {
      let busy = false;
      try {
        const done = await options.pass();
        busy = done.events > 0 || done.reminders > 0;
        failures = 0;
      } catch (error) {
        failures += 1;
        options.onError(error);
      } finally {
        running = undefined;
        schedule(failures > 0 ? backoffMs(options.pollMs, failures) : busy ? 0 : options.pollMs);
      }
    })();
  }

  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    kick() {
      // Not while passes keep failing: the backoff holds, whatever the writes ask for.
      if (!running && failures === 0) schedule(0);
    },
  };
}
