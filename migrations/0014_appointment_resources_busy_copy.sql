-- Busy time as one index range scan (issue 18). appointment_resources already carries each
-- appointment's time, status and expiry; it now also carries the three other values the
-- availability engine reads (service, duration, padding), so the window load needs no join to
-- appointments. The index covers the search's columns, so the scan reads the index and the
-- table rows it points at, nothing else.
alter table appointment_resources
  add column service_id uuid,
  add column duration integer,
  add column padding integer;

update appointment_resources ar
set service_id = a.service_id, duration = a.duration, padding = a.padding
from appointments a
where a.company_id = ar.company_id and a.id = ar.appointment_id;

-- The application writes the copies itself (appointments/repository.ts, migration/repository.ts).
-- A row inserted without them (a script, a test fixture, an older writer) gets them from its
-- appointment here, in the same transaction, so the copy can never be missing.
create or replace function slotwise_appointment_resources_fill() returns trigger
language plpgsql as $$
begin
  if new.service_id is null or new.duration is null or new.padding is null then
    select a.service_id, a.duration, a.padding into new.service_id, new.duration, new.padding
    from appointments a
    where a.company_id = new.company_id and a.id = new.appointment_id;
  end if;
  return new;
end
$$;
create trigger appointment_resources_fill before insert on appointment_resources
  for each row execute function slotwise_appointment_resources_fill();

-- No writer changes an appointment's service, duration, padding or time in place today (a
-- reschedule creates a new appointment); should one, its resource rows follow.
create or replace function slotwise_appointment_resources_follow() returns trigger
language plpgsql as $$
begin
  update appointment_resources
  set service_id = new.service_id, duration = new.duration, padding = new.padding,
      start_time = new.start_time, end_time = new.end_time
  where company_id = new.company_id and appointment_id = new.id;
  return null;
end
$$;
create trigger appointments_follow after update of service_id, duration, padding, start_time, end_time on appointments
  for each row
  when (old.service_id is distinct from new.service_id or old.duration is distinct from new.duration
        or old.padding is distinct from new.padding or old.start_time is distinct from new.start_time
        or old.end_time is distinct from new.end_time)
  execute function slotwise_appointment_resources_follow();

alter table appointment_resources
  alter column service_id set not null,
  alter column duration set not null,
  alter column padding set not null;

-- The busy-time scan: (company, resource, start) bounds the window; the rest is what it returns.
drop index appointment_resources_busy_idx;
create index appointment_resources_busy_idx on appointment_resources (company_id, resource_id, start_time)
  include (end_time, appointment_id, service_id, duration, padding, status, expires_at)
  where status in ('IN', 'RS', 'BK');
