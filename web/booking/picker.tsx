import { useEffect, useRef, useState } from 'preact/hooks';
import { messages as t } from './messages/en.js';

/** The slot picker shared by the booking page and the manage page: the visitor's zone, a month of
 * available days, and the chosen day's times. It knows nothing of the API; `search` asks it. */

export type Day = { date: string; available: boolean };
export type Slot = { startTime: string; endTime: string; resourceIds: string[] };
export type SearchQuery = { startDate: string; endDate?: string; timezone: string };
/** A search's answer, or the words to show when it failed. */
export type SearchResult = { availableDays?: Day[]; availableTimes?: Slot[] } | { problem: string };

export const visitorZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [visitorZone];

// The search refuses days before today in the zone (AVAILABILITY-102): this month's starts today.
const todayIn = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const maxDate = (a: string, b: string) => (a > b ? a : b);
export const monthOf = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit' }).format(new Date()).slice(0, 7);
function shiftMonth(month: string, by: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}
function daysIn(month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}
export const formatTime = (iso: string, zone: string) => new Intl.DateTimeFormat('en', { timeZone: zone, hour: 'numeric', minute: '2-digit' }).format(new Date(iso));
export const formatWhen = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));
const formatTimeWithZone = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en', { timeZone: zone, hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));

/** Each time's label; on the day a clock goes back an hour repeats, so those carry their zone name (1:30 AM BST, 1:30 AM GMT). */
export function timeLabels(slots: Slot[], zone: string): string[] {
  const plain = slots.map((s) => formatTime(s.startTime, zone));
  const count = new Map<string, number>();
  for (const label of plain) count.set(label, (count.get(label) ?? 0) + 1);
  return plain.map((label, i) => ((count.get(label) ?? 0) > 1 ? formatTimeWithZone(slots[i]!.startTime, zone) : label));
}
const monthTitle = (month: string) => new Intl.DateTimeFormat('en', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(new Date(`${month}-01T12:00:00Z`));
const dayLabel = (date: string) => new Intl.DateTimeFormat('en', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long' }).format(new Date(`${date}T12:00:00Z`));

export interface SlotPickerProps {
  /** The location's IANA zone, shown beside the visitor's when they differ. */
  locationZone: string;
  zone: string;
  onZone: (zone: string) => void;
  search: (query: SearchQuery) => Promise<SearchResult>;
  onPick: (slot: Slot) => void;
  /** Back out of the picker (from the day step). */
  onBack: () => void;
  onProblem: (text: string) => void;
  /** Changed by the parent to load the day's times again (after a refused hold, say). */
  refresh?: number;
}

export function SlotPicker({ locationZone, zone, onZone, search, onPick, onBack, onProblem, refresh = 0 }: SlotPickerProps) {
  const [month, setMonth] = useState(() => monthOf(zone));
  const [day, setDay] = useState<string>();
  // Each answer is kept with the month or the day it answers: when another is picked, the last
  // one's days or times must not show under the new title, not even for the frame before the new
  // search starts (a visitor could pick a time of the day before).
  const [monthDays, setMonthDays] = useState<{ month: string; days: Day[] }>();
  const days = monthDays && monthDays.month === month ? monthDays.days : undefined;
  const [loaded, setLoaded] = useState<{ day: string; slots: Slot[] }>();
  const slots = loaded && loaded.day === day ? loaded.slots : undefined;
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    setMonthDays(undefined);
    let current = true;
    void search({ startDate: maxDate(`${month}-01`, todayIn(zone)), endDate: `${month}-${daysIn(month)}`, timezone: zone }).then((answer) => {
      if (!current) return;
      if ('problem' in answer) onProblem(answer.problem);
      else setMonthDays({ month, days: answer.availableDays ?? [] });
    });
    return () => { current = false; };
  }, [month, zone]);

  useEffect(() => {
    if (!day) return;
    setLoaded(undefined);
    let current = true;
    void search({ startDate: day, timezone: zone }).then((answer) => {
      if (!current) return;
      if ('problem' in answer) onProblem(answer.problem);
      else setLoaded({ day, slots: answer.availableTimes ?? [] });
    });
    return () => { current = false; };
  }, [day, zone, refresh]);

  // Each step's heading takes focus, so keyboard and screen reader users land on the new step.
  useEffect(() => heading.current?.focus(), [day === undefined, refresh]);

  return (
    <>
      <p>
        <label for="zone">{t.yourZone}</label>
        <select id="zone" value={zone} onChange={(e) => onZone((e.target as HTMLSelectElement).value)}>
          {ZONES.map((z) => <option key={z} value={z}>{z}</option>)}
        </select>
        {zone !== locationZone && <span class="note">{t.locationZone(locationZone)}</span>}
      </p>
      {!day ? (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseDay}</h2>
          <div class="month">
            <button type="button" onClick={() => setMonth(shiftMonth(month, -1))} disabled={month <= monthOf(zone)}>{t.previousMonth}</button>
            <strong aria-live="polite">{monthTitle(month)}</strong>
            <button type="button" onClick={() => setMonth(shiftMonth(month, 1))}>{t.nextMonth}</button>
          </div>
          {!days ? <p>{t.loading}</p> : <Calendar month={month} days={days} today={todayIn(zone)} onPick={setDay} />}
          {days && !days.some((d) => d.available) && <p>{t.noDays}</p>}
          <button type="button" onClick={onBack}>{t.back}</button>
        </section>
      ) : (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseTime}: {dayLabel(day)}</h2>
          {!slots && <p>{t.loading}</p>}
          {slots?.length === 0 && <p>{t.noTimes}</p>}
          <ul class="times">
            {slots && timeLabels(slots, zone).map((label, i) => (
              <li key={slots[i]!.startTime}>
                <button type="button" onClick={() => onPick(slots[i]!)}>{label}</button>
                {/* A visitor in another zone also sees the location's own clock (outside the button, whose name stays the time). */}
                {zone !== locationZone && <span class="there">{t.atLocationTime(formatTime(slots[i]!.startTime, locationZone))}</span>}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => setDay(undefined)}>{t.back}</button>
        </section>
      )}
    </>
  );
}

function Calendar({ month, days, today, onPick }: { month: string; days: Day[]; today: string; onPick: (date: string) => void }) {
  const open = new Set(days.filter((d) => d.available).map((d) => d.date));
  const first = new Date(`${month}-01T12:00:00Z`).getUTCDay();
  const cells: Array<string | null> = Array.from({ length: (first + 6) % 7 }, () => null);
  for (let d = 1; d <= daysIn(month); d++) cells.push(`${month}-${String(d).padStart(2, '0')}`);
  while (cells.length % 7) cells.push(null);
  const weeks = Array.from({ length: cells.length / 7 }, (_, i) => cells.slice(i * 7, i * 7 + 7));
  return (
    <table class="calendar">
      <caption class="sr-only">{monthTitle(month)}</caption>
      <thead>
        <tr>{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => <th key={d} scope="col">{d}</th>)}</tr>
      </thead>
      <tbody>
        {weeks.map((week, i) => (
          <tr key={i}>
            {week.map((date, j) => (
              <td key={j}>
                {date && (
                  <button type="button" disabled={!open.has(date)} aria-label={dayLabel(date)} aria-current={date === today ? 'date' : undefined} onClick={() => onPick(date)}>
                    {Number(date.slice(8))}
                  </button>
                )}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
