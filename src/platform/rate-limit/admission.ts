import type { AdmissionLimits } from '../config.js';

export type Release = () => void;

/** Why a request was not admitted: the queue was full, or its wait ran past the maximum. */
export class AdmissionRefused extends Error {
  constructor(readonly reason: 'queue full' | 'wait too long') {
    super(`Admission refused: ${reason}`);
  }
}

interface Waiter {
  company: string;
  admit: (release: Release) => void;
  timer: NodeJS.Timeout | undefined;
}

export interface AdmissionStats {
  active: number;
  queued: number;
}

/**
 * Admission to an expensive route in this instance: at most `concurrency` requests at once, at
 * most `companyConcurrency` of them from one company, and up to `queue` more waiting in arrival
 * order for at most `maxWaitMs`. A request that finds the queue full, or waits too long, is
 * refused (the caller answers 429), so a burst is turned away quickly instead of piling up on the
 * database until it times out.
 *
 * When a slot frees, the queue is read in order and every waiter that now fits is admitted: a
 * company at its own cap does not hold up the others behind it.
 */
export class AdmissionGate {
  private active = 0;
  private readonly perCompany = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: AdmissionLimits) {}

  get stats(): AdmissionStats {
    return { active: this.active, queued: this.waiting.length };
  }

  /** Resolves with the slot's release once admitted; rejects with AdmissionRefused. */
  acquire(company: string): Promise<Release> {
    if (this.fits(company)) return Promise.resolve(this.take(company));
    if (this.waiting.length >= this.limits.queue) return Promise.reject(new AdmissionRefused('queue full'));
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { company, admit: resolve, timer: undefined };
      waiter.timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new AdmissionRefused('wait too long'));
      }, this.limits.maxWaitMs);
      this.waiting.push(waiter);
    });
  }

  private fits(company: string): boolean {
    return this.active < this.limits.concurrency && (this.perCompany.get(company) ?? 0) < this.limits.companyConcurrency;
  }

  private take(company: string): Release {
    this.active += 1;
    this.perCompany.set(company, (this.perCompany.get(company) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      const left = (this.perCompany.get(company) ?? 1) - 1;
      if (left > 0) this.perCompany.set(company, left);
      else this.perCompany.delete(company);
      this.drain();
    };
  }

  private drain(): void {
    for (let i = 0; i < this.waiting.length && this.active < this.limits.concurrency; ) {
      const waiter = this.waiting[i]!;
      if (!this.fits(waiter.company)) {
        i += 1;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.admit(this.take(waiter.company));
    }
  }
}
