import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createSlotwiseClient } from '../../packages/client/src/index.js';
import type { ManagedAppointment } from '../../packages/client/src/index.js';
import { messages } from '../booking/messages/en.js';
import { formatWhen, SlotPicker, visitorZone } from '../booking/picker.js';
import type { SearchQuery, SearchResult, Slot } from '../booking/picker.js';
import type { ErrorBody } from '../booking/problems.js';
import { explainManage } from './problems.js';
import type { Refusal } from './problems.js';

const t = messages.manage;

type Step = 'view' | 'confirm-cancel' | 'cancelled' | 'pick' | 'confirm-move';

const REFUSALS: Record<Refusal, { title: string; text: string }> = {
  invalid: { title: t.invalidTitle, text: t.invalidText },
  cancelled: { title: t.wasCancelledTitle, text: t.wasCancelledText },
  moved: { title: t.wasMovedTitle, text: t.wasMovedText },
};

/**
 * The customer's manage page, a client of /v3/manage/* only: the manage link's token is the
 * credential (Authorization: Bearer), and the page never puts it anywhere but that header and its
 * own address bar.
 */
export function ManagePage({ token: firstToken }: { token: string }) {
  const [token, setToken] = useState(firstToken);
  const api = useMemo(() => createSlotwiseClient({ baseUrl: window.location.origin, accessToken: token }), [token]);
  const [appointment, setAppointment] = useState<ManagedAppointment>();
  const [refusal, setRefusal] = useState<Refusal>();
  const [problem, setProblem] = useState<string>();
  const [status, setStatus] = useState('');
  const [step, setStep] = useState<Step>('view');
  const [picked, setPicked] = useState<Slot>();
  const [busy, setBusy] = useState(false);
  const [zone, setZone] = useState(visitorZone);
  const [refresh, setRefresh] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);

  /** A refused call: a spent or invalid link becomes its page; anything else, the words returned. */
  const refused = (statusCode: number, body: unknown): string | null => {
    const answer = explainManage(statusCode, body as ErrorBody);
    if ('refusal' in answer) {
      setRefusal(answer.refusal);
      return null;
    }
    return answer.text;
  };

  useEffect(() => {
    void (async () => {
      const a = await api.GET('/v3/manage/appointment');
      if (!a.data) return setProblem(refused(a.response.status, a.error) ?? undefined);
      setAppointment(a.data);
    })();
  }, []);

  // Each step's heading takes focus, so keyboard and screen reader users land on the new step
  // (the picker's steps focus their own headings).
  const shown = refusal ? `refused-${refusal}` : appointment ? step : 'loading';
  useLayoutEffect(() => heading.current?.focus(), [shown]);

  const when = (iso: string) => formatWhen(iso, zone);
  const what = (a: ManagedAppointment) => `${a.service.name}, ${when(a.startTime)}`;

  // The picker offers the times of the same resources; the reschedule keeps them (it sends none).
  const search = async (query: SearchQuery): Promise<SearchResult> => {
    const resourceIds = appointment?.resources.map((r) => r.id) ?? [];
    const a = await api.GET('/v3/manage/availability', { params: { query: { ...query, ...(resourceIds.length ? { ResourceIds: resourceIds } : {}) } } });
    if (!a.data) return { problem: refused(a.response.status, a.error) ?? '' };
    return a.data;
  };

  const cancel = async () => {
    setProblem(undefined);
    setBusy(true);
    const c = await api.POST('/v3/manage/appointment/cancel');
    setBusy(false);
    if (!c.data) return setProblem(refused(c.response.status, c.error) ?? undefined);
    setAppointment(c.data);
    setStatus(t.cancelledText(what(c.data)));
    setStep('cancelled');
  };

  const move = async () => {
    if (!picked) return;
    setProblem(undefined);
    setBusy(true);
    const m = await api.POST('/v3/manage/appointment/reschedule', { body: { Unavailability: { startTime: picked.startTime, endTime: picked.endTime } } });
    setBusy(false);
    if (!m.data) {
      const text = refused(m.response.status, m.error);
      if (text) {
        setProblem(text);
        chooseAgain();
      }
      return;
    }
    // The old link is spent: the address bar now holds the new one, so a reload or a bookmark works.
    window.history.replaceState(null, '', `/manage/${m.data.manageToken}`);
    setToken(m.data.manageToken);
    setAppointment(m.data.appointment);
    setPicked(undefined);
    setStatus(t.moved(when(m.data.appointment.startTime)));
    setStep('view');
  };

  /** A new change starts: the last one's words go. */
  const start = (next: Step) => {
    setStatus('');
    setProblem(undefined);
    setStep(next);
  };

  const chooseAgain = () => {
    setStep('pick');
    setRefresh((n) => n + 1);
  };

  const refusalPage = refusal && REFUSALS[refusal];

  return (
    <>
      <h1>{t.title}</h1>
      <p role="status" class="status">{status}</p>
      {problem && (
        <div class="error" role="alert">
          <p>{problem}</p>
          {/* Before the appointment ever loaded (a limit, a server hiccup) the page has nothing else to offer. */}
          {!appointment && <button type="button" onClick={() => window.location.reload()}>{messages.tryAgain}</button>}
        </div>
      )}
      {refusalPage && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{refusalPage.title}</h2>
          <p>{refusalPage.text}</p>
        </section>
      )}
      {!refusal && !appointment && !problem && <p>{messages.loading}</p>}
      {!refusal && appointment && step === 'view' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.details}</h2>
          <Facts appointment={appointment} zone={zone} />
          <Changes appointment={appointment} onReschedule={() => start('pick')} onCancel={() => start('confirm-cancel')} />
        </section>
      )}
      {!refusal && appointment && step === 'confirm-cancel' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.confirmCancel}</h2>
          <p>{t.confirmCancelText(what(appointment))}</p>
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void cancel()}>{busy ? t.cancelling : t.yesCancel}</button>
            <button type="button" disabled={busy} onClick={() => setStep('view')}>{t.keep}</button>
          </div>
        </section>
      )}
      {!refusal && appointment && step === 'cancelled' && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.cancelled}</h2>
          <p>{t.cancelledText(what(appointment))}</p>
        </section>
      )}
      {/* Kept mounted (hidden) while the new time is confirmed, so "Choose another time" returns to the same day. */}
      {!refusal && appointment && (step === 'pick' || step === 'confirm-move') && (
        <div hidden={step !== 'pick'}>
          <p>{t.movingFrom(when(appointment.startTime))}</p>
          <SlotPicker
            locationZone={appointment.location.timezoneName}
            zone={zone}
            onZone={setZone}
            search={search}
            onPick={(slot) => {
              setProblem(undefined);
              setPicked(slot);
              setStep('confirm-move');
            }}
            onBack={() => setStep('view')}
            onProblem={(text) => text && setProblem(text)}
            refresh={refresh}
          />
        </div>
      )}
      {!refusal && appointment && step === 'confirm-move' && picked && (
        <section>
          <h2 tabIndex={-1} ref={heading}>{t.confirmMove}</h2>
          <p>{t.confirmMoveText(when(appointment.startTime), when(picked.startTime))}</p>
          <div class="actions">
            <button type="button" class="primary" disabled={busy} onClick={() => void move()}>{busy ? t.moving : t.yesMove}</button>
            <button type="button" disabled={busy} onClick={chooseAgain}>{t.chooseAnother}</button>
          </div>
        </section>
      )}
    </>
  );
}

/** Service, time (the visitor's zone, and the location's when it differs), location, resources. */
function Facts({ appointment, zone }: { appointment: ManagedAppointment; zone: string }) {
  const locationZone = appointment.location.timezoneName;
  return (
    <dl class="facts">
      <dt>{t.service}</dt>
      <dd>{appointment.service.name} · {messages.minutes(appointment.duration)}</dd>
      <dt>{t.when}</dt>
      <dd>
        {formatWhen(appointment.startTime, zone)}
        {zone !== locationZone && <><br /><span class="note">{t.atLocation(formatWhen(appointment.startTime, locationZone), locationZone)}</span></>}
      </dd>
      <dt>{t.location}</dt>
      <dd>{appointment.location.name}</dd>
      {appointment.resources.length > 0 && (
        <>
          <dt>{t.with}</dt>
          <dd>{appointment.resources.map((r) => r.name).join(', ')}</dd>
        </>
      )}
    </dl>
  );
}

/** The two changes, or why each is not possible online (once when the reason is the same). */
function Changes({ appointment, onReschedule, onCancel }: { appointment: ManagedAppointment; onReschedule: () => void; onCancel: () => void }) {
  const { cancel, reschedule } = appointment;
  if (!cancel.allowed && !reschedule.allowed && cancel.reason === reschedule.reason) {
    return <p class="note">{t.cannotChange(cancel.reason ?? '')}</p>;
  }
  return (
    <>
      <div class="actions">
        {reschedule.allowed && <button type="button" class="primary" onClick={onReschedule}>{t.reschedule}</button>}
        {cancel.allowed && <button type="button" onClick={onCancel}>{t.cancel}</button>}
      </div>
      {!reschedule.allowed && <p class="note">{t.cannotReschedule(reschedule.reason ?? '')}</p>}
      {!cancel.allowed && <p class="note">{t.cannotCancel(cancel.reason ?? '')}</p>}
    </>
  );
}
