import { IANAZone } from 'luxon';

/**
 * Windows time zone names (as Microsoft products and OnSched v1's `timezoneId` write them) to IANA:
 * the common entries of CLDR's windowsZones table (territory "001"), not all of it.
 * The one table: the v1 importer (domain/migration) and the Outlook provider
 * (modules/external-calendars/providers/microsoft.ts) both read it.
 */
const WINDOWS_TO_IANA: Readonly<Record<string, string>> = {
  'Dateline Standard Time': 'Etc/GMT+12',
  'UTC-11': 'Etc/GMT+11',
  'Hawaiian Standard Time': 'Pacific/Honolulu',
  'Alaskan Standard Time': 'America/Anchorage',
  'Pacific Standard Time (Mexico)': 'America/Tijuana',
  'Pacific Standard Time': 'America/Los_Angeles',
  'US Mountain Standard Time': 'America/Phoenix',
  'Mountain Standard Time (Mexico)': 'America/Mazatlan',
  'Mountain Standard Time': 'America/Denver',
  'Central America Standard Time': 'America/Guatemala',
  'Central Standard Time': 'America/Chicago',
  'Central Standard Time (Mexico)': 'America/Mexico_City',
  'Canada Central Standard Time': 'America/Regina',
  'SA Pacific Standard Time': 'America/Bogota',
  'Eastern Standard Time': 'America/New_York',
  'Eastern Standard Time (Mexico)': 'America/Cancun',
  'US Eastern Standard Time': 'America/Indiana/Indianapolis',
  'Cuba Standard Time': 'America/Havana',
  'Venezuela Standard Time': 'America/Caracas',
  'Paraguay Standard Time': 'America/Asuncion',
  'Atlantic Standard Time': 'America/Halifax',
  'SA Western Standard Time': 'America/La_Paz',
  'Pacific SA Standard Time': 'America/Santiago',
  'Newfoundland Standard Time': 'America/St_Johns',
  'E. South America Standard Time': 'America/Sao_Paulo',
  'Argentina Standard Time': 'America/Argentina/Buenos_Aires',
  'SA Eastern Standard Time': 'America/Cayenne',
  'Montevideo Standard Time': 'America/Montevideo',
  'Greenland Standard Time': 'America/Nuuk',
  'UTC-02': 'Etc/GMT+2',
  'Azores Standard Time': 'Atlantic/Azores',
  'Cape Verde Standard Time': 'Atlantic/Cape_Verde',
  'UTC': 'UTC',
  'GMT Standard Time': 'Europe/London',
  'Greenwich Standard Time': 'Atlantic/Reykjavik',
  'Morocco Standard Time': 'Africa/Casablanca',
  'W. Europe Standard Time': 'Europe/Berlin',
  'Central Europe Standard Time': 'Europe/Budapest',
  'Romance Standard Time': 'Europe/Paris',
  'Central European Standard Time': 'Europe/Warsaw',
  'W. Central Africa Standard Time': 'Africa/Lagos',
  'GTB Standard Time': 'Europe/Bucharest',
  'FLE Standard Time': 'Europe/Kiev',
  'E. Europe Standard Time': 'Europe/Chisinau',
  'Egypt Standard Time': 'Africa/Cairo',
  'South Africa Standard Time': 'Africa/Johannesburg',
  'Israel Standard Time': 'Asia/Jerusalem',
  'Jordan Standard Time': 'Asia/Amman',
  'Middle East Standard Time': 'Asia/Beirut',
  'Turkey Standard Time': 'Europe/Istanbul',
  'Arabic Standard Time': 'Asia/Baghdad',
  'Arab Standard Time': 'Asia/Riyadh',
  'Russian Standard Time': 'Europe/Moscow',
  'E. Africa Standard Time': 'Africa/Nairobi',
  'Iran Standard Time': 'Asia/Tehran',
  'Arabian Standard Time': 'Asia/Dubai',
  'Caucasus Standard Time': 'Asia/Yerevan',
  'Georgian Standard Time': 'Asia/Tbilisi',
  'Afghanistan Standard Time': 'Asia/Kabul',
  'Ekaterinburg Standard Time': 'Asia/Yekaterinburg',
  'Pakistan Standard Time': 'Asia/Karachi',
  'India Standard Time': 'Asia/Kolkata',
  'Sri Lanka Standard Time': 'Asia/Colombo',
  'Nepal Standard Time': 'Asia/Kathmandu',
  'Bangladesh Standard Time': 'Asia/Dhaka',
  'Myanmar Standard Time': 'Asia/Yangon',
  'SE Asia Standard Time': 'Asia/Bangkok',
  'N. Central Asia Standard Time': 'Asia/Novosibirsk',
  'North Asia Standard Time': 'Asia/Krasnoyarsk',
  'China Standard Time': 'Asia/Shanghai',
  'Singapore Standard Time': 'Asia/Singapore',
  'Taipei Standard Time': 'Asia/Taipei',
  'W. Australia Standard Time': 'Australia/Perth',
  'Tokyo Standard Time': 'Asia/Tokyo',
  'Korea Standard Time': 'Asia/Seoul',
  'Cen. Australia Standard Time': 'Australia/Adelaide',
  'AUS Central Standard Time': 'Australia/Darwin',
  'E. Australia Standard Time': 'Australia/Brisbane',
  'AUS Eastern Standard Time': 'Australia/Sydney',
  'Tasmania Standard Time': 'Australia/Hobart',
  'West Pacific Standard Time': 'Pacific/Port_Moresby',
  'New Zealand Standard Time': 'Pacific/Auckland',
  'Fiji Standard Time': 'Pacific/Fiji',
  'Tonga Standard Time': 'Pacific/Tongatapu',
};

const BY_LOWER_NAME: ReadonlyMap<string, string> = new Map(Object.entries(WINDOWS_TO_IANA).map(([windows, iana]) => [windows.toLowerCase(), iana]));

/** Every Windows name the table knows. */
export const WINDOWS_ZONE_NAMES: readonly string[] = Object.keys(WINDOWS_TO_IANA);

const BY_IANA: ReadonlyMap<string, string> = new Map(Object.entries(WINDOWS_TO_IANA).map(([windows, iana]) => [iana, windows]));

/** The Windows name of an IANA zone, or null when the table has none (Graph writes accept every Windows name but only some IANA names). */
export function ianaToWindows(iana: string): string | null {
  return BY_IANA.get(iana) ?? null;
}

/** The IANA zone of a Windows zone name (any case), or null when the table does not know it. */
export function windowsToIana(name: string): string | null {
  return BY_LOWER_NAME.get(name.trim().toLowerCase()) ?? null;
}

/**
 * An IANA zone name the running Node knows, as given but with tzdb's capitals ("america/new_york"
 * → "America/New_York"), or null. Only the case is mended: ICU's canonical name of some zones is
 * the older one (Asia/Kolkata → Asia/Calcutta), which is not what the record said.
 */
export function validIana(name: string): string | null {
  const known = checkedZones.get(name);
  if (known !== undefined) return known;
  const trimmed = name.trim();
  let answer: string | null = null;
  if (trimmed !== '' && IANAZone.isValidZone(trimmed)) {
    const canonical = new Intl.DateTimeFormat('en', { timeZone: trimmed }).resolvedOptions().timeZone;
    answer = canonical.toLowerCase() === trimmed.toLowerCase() ? canonical : trimmed;
  }
  // Building Intl formatters is the costly part, and an import asks about one zone per record.
  if (checkedZones.size < 10_000) checkedZones.set(name, answer);
  return answer;
}
const checkedZones = new Map<string, string | null>();
