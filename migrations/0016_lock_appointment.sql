-- An operation on an existing appointment (book, reserve, confirm, cancel, delete, reschedule)
-- takes its advisory locks and then the appointment's row lock, in that order everywhere, and
-- must then know whether the row is still the one it read before the locks (issue 18). That was
-- two exchanges with the database: the locks, then the row read again FOR UPDATE. This function is
-- one: the locks (in lock-id order, as appointmentRepository.lock takes them), then the row lock,
-- answering the row version's xmin and its location's time zone (no row when it is gone).
--
-- The caller compares them with what it read before the locks: equal, the row is the version it
-- already holds (any update of an appointment, and of its appointment_resources, writes a new row
-- version with a new xmin; the zone, read from the location, is not covered by the appointment's
-- xmin, so it is compared itself); different or missing, it reads the row again. The row statement
-- runs after the locks with a snapshot of its own (a volatile plpgsql function takes one per
-- statement under READ COMMITTED), and FOR UPDATE answers the latest committed version anyway.
-- Its statement filters by company_id, as every statement on a tenant table must: the tenant
-- check of the test suite (test/platform/tenant-statements.check.ts) sees only the call.
create or replace function slotwise_lock_appointment(keys text[], company uuid, appointment uuid)
returns table (row_version text, zone text)
language plpgsql as $$
begin
  perform count(pg_advisory_xact_lock(h)) from (select distinct hashtextextended(k, 0) as h from unnest(keys) as k order by h) as locks;
  return query
    select a.xmin::text, l.timezone_name
    from appointments as a
    join locations as l on l.company_id = a.company_id and l.id = a.location_id
    where a.company_id = company and a.id = appointment
    for update of a;
end
$$;
