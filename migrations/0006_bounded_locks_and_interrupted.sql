-- Bounded lock waits with a fast refusal (issue 11). A booking first tries its advisory locks
-- without waiting, in lock-id order, and learns how many it got; only when one is held by another
-- transaction does it look at the slot's committed occupancy (refusing at once when it is full)
-- and then wait, bounded by lock_timeout, for the rest in the same order.
-- Returns -1 when every lock was taken, else how many were taken before the first busy one.
create or replace function slotwise_try_advisory_xact_locks(keys text[]) returns integer
language plpgsql as $$
declare
  h bigint;
  taken integer := 0;
begin
  for h in select distinct hashtextextended(k, 0) from unnest(keys) as k order by 1 loop
    if not pg_try_advisory_xact_lock(h) then
      return taken;
    end if;
    taken := taken + 1;
  end loop;
  return -1;
end
$$;

-- A delivery attempt or message cut off by a crash ended without an answer we know of: the
-- receiver may or may not have got it. Recorded as 'interrupted' (delivery unknown), not 'failed'.
alter table webhook_deliveries drop constraint if exists webhook_deliveries_outcome_check;
alter table webhook_deliveries add constraint webhook_deliveries_outcome_check check (outcome in ('pending', 'delivered', 'failed', 'interrupted'));
alter table notifications drop constraint if exists notifications_status_check;
alter table notifications add constraint notifications_status_check check (status in ('pending', 'sent', 'not_sent', 'failed', 'interrupted'));
