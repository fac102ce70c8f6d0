import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createSlotwiseClient } from '../../packages/client/src/index.js';
import { messages as t } from './messages/en.js';
import { googleLink, icsText, outlookLink } from './ics.js';
import type { CalendarEntry } from './ics.js';

type Location = { id: string; name: string; timezoneName: string; address: { [key: string]: unknown } | null };
type Service = { id: string; name: string; description: string | null; duration: number; feeAmount: number | null; locationIds: string[] };
type Day = { date: string; available: boolean };
type Slot = { startTime: string; endTime: string; resourceIds: string[] };
type Held = { id: string; expiresAt: string | null; startTime: string; endTime: string };
type Problem = { text: string; retry?: () => void };
type ErrorBody = { message?: string; code?: string } | undefined;

const visitorZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [visitorZone];

/** Words and a next step for an API refusal (docs/api.md, Public). */
function explain(status: number, body: ErrorBody): string {
  if (body?.code === 'BOOKING-105') return t.slotTaken;
  if (body?.code === 'BOOKING-111') return t.holdExpired;
  if (status === 429) return t.limited;
  if (status === 401) return t.unknownClient;
  if (status === 403) return t.notAllowed;
  if (/expired|no longer held|not held/i.test(body?.message ?? '')) return t.holdExpired;
  return t.generic(body?.message ?? `HTTP ${status}`);
}

// The search refuses days before today in the zone (AVAILABILITY-102): this month's starts today.
const todayIn = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const maxDate = (a: string, b: string) => (a > b ? a : b);
const monthOf = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit' }).format(new Date()).slice(0, 7);
function shiftMonth(month: string, by: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}
function daysIn(month: string): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}
const formatTime = (iso: string, zone: string) => new Intl.DateTimeFormat('en', { timeZone: zone, hour: 'numeric', minute: '2-digit' }).format(new Date(iso));
const formatWhen = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en', { timeZone: zone, weekday: 'long', day: 'numeric', month: 'long', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));
const monthTitle = (month: string) => new Intl.DateTimeFormat('en', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(new Date(`${month}-01T12:00:00Z`));
const dayLabel = (date: string) => new Intl.DateTimeFormat('en', { timeZone: 'UTC', weekday: 'long', day: 'numeric', month: 'long' }).format(new Date(`${date}T12:00:00Z`));

export function BookingPage({ clientId }: { clientId: string }) {
  const api = useMemo(() => createSlotwiseClient({ baseUrl: window.location.origin, clientId }), [clientId]);
  const [problem, setProblem] = useState<Problem>();
  const [company, setCompany] = useState<string>();
  const [locations, setLocations] = useState<Location[]>();
  const [location, setLocation] = useState<Location>();
  const [services, setServices] = useState<Service[]>();
  const [service, setService] = useState<Service>();
  const [zone, setZone] = useState(visitorZone);
  const [month, setMonth] = useState(() => monthOf(visitorZone));
  const [days, setDays] = useState<Day[]>();
  const [day, setDay] = useState<string>();
  const [slots, setSlots] = useState<Slot[]>();
  const [held, setHeld] = useState<Held>();
  const [booked, setBooked] = useState<CalendarEntry>();
  const heading = useRef<HTMLHeadingElement>(null);

  const fail = (status: number, body: ErrorBody, retry?: () => void) => setProblem({ text: explain(status, body), ...(retry ? { retry } : {}) });

  useEffect(() => {
    void (async () => {
      const [c, l] = await Promise.all([api.GET('/v3/public/company'), api.GET('/v3/public/locations')]);
      if (!c.data) return fail(c.response.status, c.error as ErrorBody);
      if (!l.data) return fail(l.response.status, l.error as ErrorBody);
      setCompany(c.data.name);
      setLocations(l.data.data as Location[]);
      if (l.data.data.length === 1) setLocation(l.data.data[0] as Location);
    })();
  }, [api]);

  useEffect(() => {
    if (!location) return;
    void (async () => {
      const s = await api.GET('/v3/public/services', { params: { query: { LocationId: location.id } } });
      if (!s.data) return fail(s.response.status, s.error as ErrorBody);
      setServices(s.data.data as Service[]);
    })();
  }, [api, location]);

  useEffect(() => {
    if (!location || !service) return;
    setDays(undefined);
    void (async () => {
      const query = { LocationId: location.id, ServiceId: service.id, startDate: maxDate(`${month}-01`, todayIn(zone)), endDate: `${month}-${daysIn(month)}`, timezone: zone };
      const a = await api.GET('/v3/public/availability', { params: { query } });
      if (!a.data) return fail(a.response.status, a.error as ErrorBody);
      setDays(a.data.availableDays);
    })();
  }, [api, location, service, month, zone]);

  const loadTimes = async (date: string) => {
    if (!location || !service) return;
    setSlots(undefined);
    const a = await api.GET('/v3/public/availability', { params: { query: { LocationId: location.id, ServiceId: service.id, startDate: date, timezone: zone } } });
    if (!a.data) return fail(a.response.status, a.error as ErrorBody);
    setSlots(a.data.availableTimes);
  };
  useEffect(() => {
    if (day) void loadTimes(day);
  }, [day, zone]);

  // Each step's heading takes focus, so keyboard and screen reader users land on the new step.
  const step = booked ? 'done' : held ? 'details' : day ? 'time' : service ? 'day' : location ? 'service' : 'location';
  useEffect(() => heading.current?.focus(), [step]);

  const hold = async (slot: Slot) => {
    if (!location || !service) return;
    setProblem(undefined);
    const h = await api.POST('/v3/public/appointment/hold', {
      params: { query: { LocationId: location.id, ServiceId: service.id } },
      body: { Unavailability: { startTime: slot.startTime, endTime: slot.endTime }, ResourceIds: slot.resourceIds },
    });
    if (!h.data) {
      fail(h.response.status, h.error as ErrorBody);
      if (day) void loadTimes(day);
      return;
    }
    setHeld(h.data as Held);
  };

  const chooseAgain = () => {
    setHeld(undefined);
    if (day) void loadTimes(day);
  };

  const book = async (form: HTMLFormElement) => {
    if (!held || !service || !location) return;
    setProblem(undefined);
    const data = new FormData(form);
    const phone = String(data.get('phone') ?? '').trim();
    const b = await api.PUT('/v3/public/appointment/{id}/book', {
      params: { path: { id: held.id } },
      body: { name: String(data.get('name')), email: String(data.get('email')), ...(phone ? { phone } : {}) },
    });
    if (!b.data) {
      const body = b.error as ErrorBody;
      const text = explain(b.response.status, body);
      if (text === t.slotTaken || text === t.holdExpired || b.response.status === 404) {
        setProblem({ text: text === t.slotTaken ? t.slotTaken : t.holdExpired });
        chooseAgain();
      } else setProblem({ text });
      return;
    }
    setBooked({ id: held.id, title: `${service.name}${company ? ` (${company})` : ''}`, start: held.startTime, end: held.endTime, location: location.name });
  };

  const restart = () => {
    setBooked(undefined);
    setHeld(undefined);
    setDay(undefined);
    setService(undefined);
    if ((locations?.length ?? 0) > 1) setLocation(undefined);
  };

  return (
    <>
      <h1>{company ? `${t.title}: ${company}` : t.title}</h1>
      {problem && (
        <div class="error" role="alert">
          <p>{problem.text}</p>
          {problem.retry && <button type="button" onClick={problem.retry}>{t.tryAgain}</button>}
        </div>
      )}
      {!locations && !problem && <p>{t.loading}</p>}
      {step === 'location' && locations && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseLocation}</h2>
          <ul class="choices">
            {locations.map((l) => (
              <li key={l.id}><button type="button" onClick={() => setLocation(l)}>{l.name}</button></li>
            ))}
          </ul>
        </section>
      )}
      {step === 'service' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseService}</h2>
          {!services && <p>{t.loading}</p>}
          <ul class="choices">
            {services?.map((s) => (
              <li key={s.id}>
                <button type="button" onClick={() => { setMonth(monthOf(zone)); setService(s); }}>
                  <strong>{s.name}</strong> · {t.minutes(s.duration)} · {s.feeAmount ? s.feeAmount.toFixed(2) : t.free}
                  {s.description && <><br /><span class="note">{s.description}</span></>}
                </button>
              </li>
            ))}
          </ul>
          {(locations?.length ?? 0) > 1 && <button type="button" onClick={() => setLocation(undefined)}>{t.back}</button>}
        </section>
      )}
      {(step === 'day' || step === 'time') && location && (
        <p>
          <label for="zone">{t.yourZone}</label>
          <select id="zone" value={zone} onChange={(e) => setZone((e.target as HTMLSelectElement).value)}>
            {ZONES.map((z) => <option key={z} value={z}>{z}</option>)}
          </select>
          {zone !== location.timezoneName && <span class="note">{t.locationZone(location.timezoneName)}</span>}
        </p>
      )}
      {step === 'day' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseDay}</h2>
          <div class="month">
            <button type="button" onClick={() => setMonth(shiftMonth(month, -1))} disabled={month <= monthOf(zone)}>{t.previousMonth}</button>
            <strong aria-live="polite">{monthTitle(month)}</strong>
            <button type="button" onClick={() => setMonth(shiftMonth(month, 1))}>{t.nextMonth}</button>
          </div>
          {!days ? <p>{t.loading}</p> : <Calendar month={month} days={days} onPick={setDay} />}
          {days && !days.some((d) => d.available) && <p>{t.noDays}</p>}
          <button type="button" onClick={() => setService(undefined)}>{t.back}</button>
        </section>
      )}
      {step === 'time' && day && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseTime}: {dayLabel(day)}</h2>
          {!slots && <p>{t.loading}</p>}
          {slots?.length === 0 && <p>{t.noTimes}</p>}
          <ul class="times">
            {slots?.map((s) => (
              <li key={s.startTime}><button type="button" onClick={() => void hold(s)}>{formatTime(s.startTime, zone)}</button></li>
            ))}
          </ul>
          <button type="button" onClick={() => setDay(undefined)}>{t.back}</button>
        </section>
      )}
      {step === 'details' && held && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.details}</h2>
          <p>{t.held(formatWhen(held.startTime, zone))}</p>
          {held.expiresAt && <Countdown until={held.expiresAt} onExpired={() => { setProblem({ text: t.holdExpired }); chooseAgain(); }} />}
          <form onSubmit={(e) => { e.preventDefault(); void book(e.currentTarget as HTMLFormElement); }}>
            <label for="name">{t.name}</label>
            <input id="name" name="name" autoComplete="name" required />
            <label for="email">{t.email}</label>
            <input id="email" name="email" type="email" autoComplete="email" required />
            <label for="phone">{t.phone}</label>
            <input id="phone" name="phone" type="tel" autoComplete="tel" />
            <div class="actions">
              <button type="submit" class="primary">{t.book}</button>
              <button type="button" onClick={chooseAgain}>{t.back}</button>
            </div>
          </form>
        </section>
      )}
      {step === 'done' && booked && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.confirmed}</h2>
          <p>{t.confirmedText(booked.title, formatWhen(booked.start, zone))}</p>
          <div class="actions">
            <a href={`data:text/calendar;charset=utf-8,${encodeURIComponent(icsText(booked, window.location.host))}`} download="appointment.ics">{t.downloadIcs}</a>
            <a href={googleLink(booked)} target="_blank" rel="noopener">{t.addGoogle}</a>
            <a href={outlookLink(booked)} target="_blank" rel="noopener">{t.addOutlook}</a>
          </div>
          <p><button type="button" onClick={restart}>{t.bookAnother}</button></p>
        </section>
      )}
    </>
  );
}

function Calendar({ month, days, onPick }: { month: string; days: Day[]; onPick: (date: string) => void }) {
  const open = new Set(days.filter((d) => d.available).map((d) => d.date));
  const first = new Date(`${month}-01T12:00:00Z`).getUTCDay();
  const cells: Array<string | null> = Array.from({ length: (first + 6) % 7 }, () => null);
  for (let d = 1; d <= daysIn(month); d++) cells.push(`${month}-${String(d).padStart(2, '0')}`);
  while (cells.length % 7) cells.push(null);
  const weeks = Array.from({ length: cells.length / 7 }, (_, i) => cells.slice(i * 7, i * 7 + 7));
  return (
    <table class="calendar">
      <caption class="note">{monthTitle(month)}</caption>
      <thead>
        <tr>{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => <th key={d} scope="col">{d}</th>)}</tr>
      </thead>
      <tbody>
        {weeks.map((week, i) => (
          <tr key={i}>
            {week.map((date, j) => (
              <td key={j}>
                {date && (
                  <button type="button" disabled={!open.has(date)} aria-label={dayLabel(date)} onClick={() => onPick(date)}>
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

function Countdown({ until, onExpired }: { until: string; onExpired: () => void }) {
  const [now, setNow] = useState(Date.now());
  const left = Math.max(0, Math.floor((Date.parse(until) - now) / 1000));
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (left === 0) onExpired();
  }, [left === 0]);
  // The visible clock ticks every second; the live region changes once a minute (and at 30 s), so a
  // screen reader is told the time left without being interrupted every second.
  const spoken = left > 60 ? t.countdown(Math.ceil(left / 60), 0) : left > 30 ? t.countdown(1, 0) : t.countdown(0, 30);
  return (
    <>
      <p aria-hidden="true">{t.countdown(Math.floor(left / 60), left % 60)}</p>
      <p class="sr-only" aria-live="polite" aria-atomic="true">{spoken}</p>
    </>
  );
}
