/**
 * The company's booking page settings (PUT /v3/company `bookingPage`, docs/api.md "Booking page
 * settings") and the rules on the custom fields a visitor fills in. Pure: no database, no HTTP.
 */

export const BOOKING_FIELD_NAMES = ['field1', 'field2', 'field3', 'field4', 'field5', 'field6', 'field7', 'field8', 'field9', 'field10'] as const;
export type BookingFieldName = (typeof BOOKING_FIELD_NAMES)[number];

/** One of the appointment's custom fields, asked on the booking page under `label`. */
export interface BookingField {
  name: BookingFieldName;
  label: string;
  required: boolean;
}

export interface BookingPageSettings {
  /** `#rrggbb`: buttons and links of the hosted page and the embed; null for the default blue. */
  brandColor?: string | null;
  /** An https image shown above the page's title. */
  logoUrl?: string | null;
  /** ISO 4217 code the fees are shown in; null shows bare amounts. */
  currency?: string | null;
  fields?: BookingField[];
}

export interface SettingsProblem {
  path: string;
  message: string;
}

const CURRENCIES: ReadonlySet<string> = new Set(
  (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('currency') ?? [],
);

/** What the schema cannot say: a real currency, an https logo, each field asked once. */
export function bookingPageProblems(settings: BookingPageSettings): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  if (settings.currency && CURRENCIES.size > 0 && !CURRENCIES.has(settings.currency)) {
    problems.push({ path: 'bookingPage.currency', message: `"${settings.currency}" is not an ISO 4217 currency code` });
  }
  if (settings.logoUrl) {
    let url: URL | undefined;
    try {
      url = new URL(settings.logoUrl);
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'https:' || url.username || url.password) {
      problems.push({ path: 'bookingPage.logoUrl', message: 'logoUrl must be an https URL without credentials' });
    }
  }
  const seen = new Set<string>();
  (settings.fields ?? []).forEach((field, index) => {
    if (seen.has(field.name)) problems.push({ path: `bookingPage.fields.${index}.name`, message: `${field.name} is asked more than once` });
    seen.add(field.name);
  });
  return problems;
}

/**
 * The custom field values a visitor sent, checked against the fields the page asks: a required
 * field must be filled, and a field the company does not ask is refused (a page cannot write
 * fields the company keeps for its own staff).
 */
export function bookingFieldProblems(fields: BookingField[], values: Partial<Record<BookingFieldName, string | null | undefined>>): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  const asked = new Map(fields.map((field) => [field.name, field]));
  for (const name of BOOKING_FIELD_NAMES) {
    const value = values[name];
    const field = asked.get(name);
    const filled = typeof value === 'string' && value.trim() !== '';
    if (!field && value !== undefined && value !== null) problems.push({ path: name, message: `${name} is not a field of this booking page` });
    else if (field?.required && !filled) problems.push({ path: name, message: `${field.label} is required` });
  }
  return problems;
}
