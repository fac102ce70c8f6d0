/** The confirmation's calendar entry as .ics text and the Google / Outlook "add" links. */
export interface CalendarEntry {
  id: string;
  title: string;
  start: string;
  end: string;
  location: string;
}

const stamp = (iso: string) => new Date(iso).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
const escape = (text: string) => text.replace(/[\\;,]/g, (c) => `\\${c}`).replace(/\n/g, '\\n');

export function icsText(entry: CalendarEntry, host: string): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Slotwise//Booking page//EN',
    'BEGIN:VEVENT',
    `UID:${entry.id}@${host}`,
    `DTSTAMP:${stamp(new Date().toISOString())}`,
    `DTSTART:${stamp(entry.start)}`,
    `DTEND:${stamp(entry.end)}`,
    `SUMMARY:${escape(entry.title)}`,
    `LOCATION:${escape(entry.location)}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

export function googleLink(entry: CalendarEntry): string {
  const params = new URLSearchParams({ action: 'TEMPLATE', text: entry.title, dates: `${stamp(entry.start)}/${stamp(entry.end)}`, location: entry.location });
  return `https://calendar.google.com/calendar/render?${params}`;
}

export function outlookLink(entry: CalendarEntry): string {
  const params = new URLSearchParams({ path: '/calendar/action/compose', rru: 'addevent', subject: entry.title, startdt: entry.start, enddt: entry.end, location: entry.location });
  return `https://outlook.live.com/calendar/0/deeplink/compose?${params}`;
}
