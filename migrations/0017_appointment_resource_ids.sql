-- An appointment's resource ids, kept on the appointment itself (issue 18). Every answer that
-- carries an appointment (a list page, a cursor page, the read before an operation) gave each row
-- its resourceIds from a subquery of appointment_resources: for a cursor page of 100, 100 index
-- probes, about a sixth of the page's statement.
--
-- An appointment's resources never change once it is inserted (a reschedule creates a new
-- appointment; delete removes both), so the copy is written once, by the statement that inserts
-- the appointment and its resource rows from the same list (appointments/repository.ts insert,
-- migration/repository.ts insertAppointments), in resource_id order as the subquery answered.
-- A row without it (null: a script, a test fixture, an older writer) is read through the
-- subquery as before (appointments/repository.ts, resourceIdsOf), so the copy is never needed
-- for a right answer, only for a fast one.
alter table appointments add column resource_ids uuid[];

-- Rewrites every appointment row (a new version of each, as any update does): on a large
-- installation, apply it in a quiet hour (docs/operations.md, "Schema migrations on a deploy").
update appointments as a
set resource_ids = array(
  select ar.resource_id from appointment_resources as ar
  where ar.company_id = a.company_id and ar.appointment_id = a.id
  order by ar.resource_id);
