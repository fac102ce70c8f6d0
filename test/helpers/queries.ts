import pg from 'pg';

/**
 * The calls of node-postgres's Client.query while `work` runs, as their SQL text: each is one
 * exchange with the database (a statement, perhaps with its transaction's begin or commit riding
 * along, src/platform/database/transaction-control.ts). Both databases run through node-postgres.
 */
export async function queriesDuring(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first] = args;
    sent.push(typeof first === 'string' ? first : String((first as { text?: unknown } | null)?.text ?? ''));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}
