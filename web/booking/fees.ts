import { messages as t } from './messages/en.js';

/** A service's fee as the page shows it: "Free" for none, in the company's currency when set
 * (bookingPage.currency), else the bare amount. */
export function formatFee(amount: number | null, currency: string | null): string {
  if (!amount) return t.free;
  if (!currency) return amount.toFixed(2);
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount);
  } catch {
    // A code this browser does not know: the amount and the code, never a broken page.
    return `${amount.toFixed(2)} ${currency}`;
  }
}
