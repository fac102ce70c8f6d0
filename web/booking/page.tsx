import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createSlotwiseClient } from '../../packages/client/src/index.js';
import { messages as t } from './messages/en.js';
import { googleLink, icsText, outlookLink } from './ics.js';
import type { CalendarEntry } from './ics.js';
import { formatWhen, SlotPicker, visitorZone } from './picker.js';
import type { SearchQuery, SearchResult, Slot } from './picker.js';
import { explain } from './problems.js';
import type { ErrorBody } from './problems.js';
import { readableBrand } from './brand.js';
import { formatFee } from './fees.js';

type Location = { id: string; name: string; timezoneName: string; address: { [key: string]: unknown } | null };
type Service = { id: string; name: string; description: string | null; duration: number; feeAmount: number | null; roundRobin: string; locationIds: string[] };
type Resource = { id: string; name: string };
/** The visitor's choice of resource: one of them, or anyone available (`resource` absent). */
type ResourceChoice = { resource?: Resource };
/** The company's booking page settings (GET /v3/public/company `bookingPage`). */
type PageSettings = { brandColor: string | null; logoUrl: string | null; currency: string | null; fields: Array<{ name: string; label: string; required: boolean }> };
/** A refusal's field errors (the spec's error body): the custom fields' are shown beside them. */
type FieldErrorBody = { errors?: Array<{ path?: string; msg?: string; location?: string }> };
type Held = { id: string; expiresAt: string | null; startTime: string; endTime: string };
type Problem = { text: string; retry?: () => void };

export function BookingPage({ clientId }: { clientId: string }) {
  const api = useMemo(() => createSlotwiseClient({ baseUrl: window.location.origin, clientId }), [clientId]);
  const [problem, setProblem] = useState<Problem>();
  const [company, setCompany] = useState<string>();
  const [settings, setSettings] = useState<PageSettings>();
  const [logoBroken, setLogoBroken] = useState(false);
  const [locations, setLocations] = useState<Location[]>();
  const [location, setLocation] = useState<Location>();
  const [services, setServices] = useState<Service[]>();
  const [service, setService] = useState<Service>();
  const [resources, setResources] = useState<Resource[]>();
  const [choice, setChoice] = useState<ResourceChoice>();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [zone, setZone] = useState(visitorZone);
  const [refresh, setRefresh] = useState(0);
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
      setSettings(c.data.bookingPage as PageSettings);
      // Buttons and links take the company's colour, darkened when too light to read (brand.ts).
      if (c.data.bookingPage.brandColor) document.documentElement.style.setProperty('--brand', readableBrand(c.data.bookingPage.brandColor));
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

  // The resources of the chosen service here. With one (or none), or a service that books them all
  // together (COMBINED), there is nothing to choose: the step is skipped as "anyone".
  useEffect(() => {
    setResources(undefined);
    setChoice(undefined);
    if (!location || !service) return;
    let current = true;
    void (async () => {
      const r = await api.GET('/v3/public/resources', { params: { query: { LocationId: location.id, ServiceId: service.id } } });
      if (!current) return;
      if (!r.data) return fail(r.response.status, r.error as ErrorBody);
      setResources(r.data.data);
      if (r.data.data.length <= 1 || service.roundRobin === 'COMBINED') setChoice({});
    })();
    return () => { current = false; };
  }, [api, location, service]);
  const resourceStep = (resources?.length ?? 0) > 1 && service?.roundRobin !== 'COMBINED';
  // Reset at once, so the new service never shows the previous one's resources.
  const chooseService = (chosen: Service) => {
    setResources(undefined);
    setChoice(undefined);
    setService(chosen);
  };

  const search = async (query: SearchQuery): Promise<SearchResult> => {
    if (!location || !service) return { problem: t.generic('no service chosen') };
    const chosen = choice?.resource ? { ResourceIds: [choice.resource.id] } : {};
    const a = await api.GET('/v3/public/availability', { params: { query: { LocationId: location.id, ServiceId: service.id, ...chosen, ...query } } });
    if (!a.data) return { problem: explain(a.response.status, a.error as ErrorBody) };
    return a.data as SearchResult;
  };

  // Each step's heading takes focus, so keyboard and screen reader users land on the new step.
  // A time in the visitor's zone, and at the location when that differs (both on the hold and the
  // confirmation, so a visitor abroad never wonders which clock they booked by).
  const when = (iso: string) =>
    location && location.timezoneName !== zone ? t.bothZones(formatWhen(iso, zone), formatWhen(iso, location.timezoneName)) : formatWhen(iso, zone);
  const step = booked ? 'done' : held ? 'details' : service && choice ? 'pick' : service && resources ? 'resource' : service ? 'resources' : location ? 'service' : 'location';
  // Before paint, so the heading is never seen without focus (a screen reader would read the old step).
  useLayoutEffect(() => heading.current?.focus(), [step]);

  const hold = async (slot: Slot) => {
    if (!location || !service) return;
    setProblem(undefined);
    setFieldErrors({});
    const h = await api.POST('/v3/public/appointment/hold', {
      params: { query: { LocationId: location.id, ServiceId: service.id } },
      body: { Unavailability: { startTime: slot.startTime, endTime: slot.endTime }, ...holdResources(service, choice, slot) },
    });
    if (!h.data) {
      fail(h.response.status, h.error as ErrorBody);
      setRefresh((n) => n + 1);
      return;
    }
    setHeld(h.data as Held);
  };

  const chooseAgain = () => {
    setHeld(undefined);
    setRefresh((n) => n + 1);
  };

  const book = async (form: HTMLFormElement) => {
    if (!held || !service || !location) return;
    setProblem(undefined);
    const data = new FormData(form);
    const phone = String(data.get('phone') ?? '').trim();
    // The answers to the company's own questions; an empty optional one is not sent.
    const answers = Object.fromEntries((settings?.fields ?? []).map((f) => [f.name, String(data.get(f.name) ?? '').trim()]).filter(([, value]) => value !== ''));
    setFieldErrors({});
    const b = await api.PUT('/v3/public/appointment/{id}/book', {
      params: { path: { id: held.id } },
      body: { name: String(data.get('name')), email: String(data.get('email')), ...(phone ? { phone } : {}), ...answers },
    });
    if (!b.data) {
      const body = b.error as ErrorBody;
      const onFields = (b.error as FieldErrorBody | undefined)?.errors?.filter((e) => e.location === 'body' && settings?.fields.some((f) => f.name === e.path)) ?? [];
      if (b.response.status === 400 && onFields.length > 0) {
        // Said beside the field it is about; the first such field takes focus.
        setFieldErrors(Object.fromEntries(onFields.map((e) => [e.path!, e.msg ?? t.generic('invalid')])));
        form.querySelector<HTMLInputElement>(`[name="${onFields[0]!.path!}"]`)?.focus();
        return;
      }
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
    setService(undefined);
    setFieldErrors({});
    if ((locations?.length ?? 0) > 1) setLocation(undefined);
  };

  return (
    <>
      {settings?.logoUrl && company && (
        // Hidden when it cannot load (offline, blocked): a broken image must not break the layout.
        <img class="logo" src={settings.logoUrl} alt={company} hidden={logoBroken} onError={() => setLogoBroken(true)} />
      )}
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
                <button type="button" onClick={() => chooseService(s)}>
                  <strong>{s.name}</strong> · {t.minutes(s.duration)} · {formatFee(s.feeAmount, settings?.currency ?? null)}
                  {s.description && <><br /><span class="note">{s.description}</span></>}
                </button>
              </li>
            ))}
          </ul>
          {(locations?.length ?? 0) > 1 && <button type="button" onClick={() => setLocation(undefined)}>{t.back}</button>}
        </section>
      )}
      {step === 'resources' && !problem && <p>{t.loading}</p>}
      {step === 'resource' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.chooseResource}</h2>
          <ul class="choices">
            <li><button type="button" onClick={() => setChoice({})}><strong>{t.anyone}</strong></button></li>
            {resources?.map((r) => (
              <li key={r.id}><button type="button" onClick={() => setChoice({ resource: r })}>{r.name}</button></li>
            ))}
          </ul>
          <button type="button" onClick={() => setService(undefined)}>{t.back}</button>
        </section>
      )}
      {(step === 'resource' || step === 'pick' || step === 'details') && service && (
        <p class="summary">
          {t.summary(service.name, t.minutes(service.duration), formatFee(service.feeAmount, settings?.currency ?? null), resourceStep && choice ? choice.resource?.name ?? t.anyone : undefined)}
        </p>
      )}
      {/* Kept mounted (hidden) while a hold is filled in, so "Back" returns to the same day's times. */}
      {(step === 'pick' || step === 'details') && location && (
        // Keyed by the resource choice: another choice searches afresh.
        <div hidden={step !== 'pick'} key={choice?.resource?.id ?? 'anyone'}>
        <SlotPicker
          locationZone={location.timezoneName}
          zone={zone}
          onZone={setZone}
          search={search}
          onPick={(slot) => void hold(slot)}
          onBack={() => (resourceStep ? setChoice(undefined) : setService(undefined))}
          onProblem={(text) => setProblem({ text })}
          refresh={refresh}
        />
        </div>
      )}
      {step === 'details' && held && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.details}</h2>
          <p>{t.held(when(held.startTime))}</p>
          <p class="note">{t.holdNote}</p>
          {held.expiresAt && <Countdown until={held.expiresAt} onExpired={() => { setProblem({ text: t.holdExpired }); chooseAgain(); }} />}
          <form onSubmit={(e) => { e.preventDefault(); void book(e.currentTarget as HTMLFormElement); }}>
            <label for="name">{t.name}</label>
            <input id="name" name="name" autoComplete="name" required />
            <label for="email">{t.email}</label>
            <input id="email" name="email" type="email" autoComplete="email" required />
            <label for="phone">{t.phone}</label>
            <input id="phone" name="phone" type="tel" autoComplete="tel" />
            {settings?.fields.map((f) => (
              <div key={f.name}>
                <label for={`answer-${f.name}`}>{f.required ? f.label : t.optional(f.label)}</label>
                <input
                  id={`answer-${f.name}`}
                  name={f.name}
                  required={f.required}
                  maxLength={255}
                  aria-invalid={fieldErrors[f.name] ? 'true' : undefined}
                  aria-describedby={fieldErrors[f.name] ? `answer-${f.name}-error` : undefined}
                />
                {fieldErrors[f.name] && <p class="field-error" id={`answer-${f.name}-error`}>{fieldErrors[f.name]}</p>}
              </div>
            ))}
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
          <p>{t.confirmedText(booked.title, when(booked.start))}</p>
          {resourceStep && choice?.resource && <p>{t.bookedWith(choice.resource.name)}</p>}
          {location && <p>{t.where(location.name, addressLine(location.address))}</p>}
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

/** A location's address on one line, from whichever of its parts are set. */
function addressLine(address: Location['address']): string {
  if (!address) return '';
  const parts = ['addressLine1', 'addressLine2', 'city', 'state', 'postalCode'].map((key) => address[key]).filter((v): v is string => typeof v === 'string' && v.trim() !== '');
  return parts.join(', ');
}

/**
 * The ResourceIds of the hold: the chosen resource; for "anyone", none when the service picks one
 * itself (RANDOM, BALANCED) or takes them all (COMBINED), and the first free one of the time when
 * it needs them named (NONE: naming every free one would book them all).
 */
function holdResources(service: Service, choice: ResourceChoice | undefined, slot: Slot): { ResourceIds?: string[] } {
  if (choice?.resource) return { ResourceIds: [choice.resource.id] };
  if (service.roundRobin === 'NONE') return slot.resourceIds[0] ? { ResourceIds: [slot.resourceIds[0]] } : {};
  return {};
}

function Countdown({ until, onExpired }: { until: string; onExpired: () => void }) {
  const [now, setNow] = useState(Date.now());
  // Rounded up: the page must not call the hold lost (and ask for the times again) while the server
  // still holds it, which a floor would do up to a second early.
  const left = Math.max(0, Math.ceil((Date.parse(until) - now) / 1000));
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
