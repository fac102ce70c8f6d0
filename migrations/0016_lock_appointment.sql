-- An operation on an existing appointment (book, reserve, confirm, cancel, delete, reschedule)
-- takes its advisory locks and then the appointment's row lock, in that order everywhere, and
-- must then know whether the row is still the one it read before the locks (issue 18). That was
-- two exchanges with the database: the locks, then the row read again FOR UPDATE. This function is
-- one: the locks (in lock-id order, as appointmentRepository.lock takes them), then the row lock,
-- answering the row version's xmin (null when the row is gone).
--
-- The caller compares it with the xmin it read before the locks: equal, the row is the version it
-- already holds (any update of an appointment, and of its appointment_resources, writes a new row
-- version with a new xmin); different or null, it reads the row again. The row statement runs
-- after the locks with a snapshot of its own (a volatile plpgsql function takes one per statement
-- under READ COMMITTED), and FOR UPDATE answers the latest committed version anyway.
create or replace function slotwise_lock_appointment(keys text[], company uuid, appointment uuid) returns text
language plpgsql as $$
declare
  version text;
begin
  perform count(pg_advisory_xact_lock(h)) from (select distinct hashtextextended(k, 0) as h from unnest(keys) as k order by h) as locks;
  select a.xmin::text into version from appointments as a where a.company_id = company and a.id = appointment for update;
  return version;
end
$$;
