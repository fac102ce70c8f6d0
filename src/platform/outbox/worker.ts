/**
 * The background loop of one instance: runs a pass of the outbox dispatcher every `pollMs`, right
 * away again while passes find work, and never two passes at once. A failing pass is logged and the
 * loop goes on; `stop` waits for the pass in flight, so shutdown never cuts a delivery in half.
 */
export interface OutboxWorker {
  stop(): Promise<void>;
  /** Asks for a pass as soon as the current one ends (after a booking, for example). */
  kick(): void;
}

export function startOutboxWorker(options: {
  pollMs: number;
  pass: () => Promise<{ reminders: number; events: number }>;
  onError: (error: unknown) => void;
}): OutboxWorker {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

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
      } catch (error) {
        options.onError(error);
      } finally {
        running = undefined;
        schedule(busy ? 0 : options.pollMs);
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
      if (!running) schedule(0);
    },
  };
}
