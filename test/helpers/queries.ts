import pg from 'pg';

/** A statement as node-postgres was given it. */
export interface SentStatement {
  text: string;
  values: unknown[];
}

/**
 * The calls of node-postgres's Client.query while `work` runs, with their values: each is one
 * exchange with the database (a statement, perhaps with its transaction's begin or commit riding
 * along, or another statement in front of it, whose text then comes first:
 * src/platform/database/transaction-control.ts). Both databases run through node-postgres.
 */
export async function statementsDuring(work: () => Promise<unknown>): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args;
    if (typeof first === 'string') sent.push({ text: first, values: Array.isArray(second) ? second : [] });
    else {
      // A statement with another in front of it in its exchange (transaction-control.ts, withLeading): one exchange, both texts.
      const config = first as { text?: unknown; values?: unknown[]; leadingText?: string } | null;
      const text = String(config?.text ?? '');
      sent.push({ text: config?.leadingText ? `${config.leadingText}\n${text}` : text, values: config?.values ?? [] });
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

/** The SQL text of those calls (statementsDuring). */
export async function queriesDuring(work: () => Promise<unknown>): Promise<string[]> {
  return (await statementsDuring(work)).map((statement) => statement.text);
}
