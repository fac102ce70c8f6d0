-- Addresses use the legacy catalog's field names in camelCase (addressLine1, addressLine2, city,
-- state, postalCode, country) instead of line1/line2; country and state are ISO 3166 codes, in capitals.
-- A row already in the new shape keeps its lines (coalesce); only text country and state values
-- are put in capitals (anything else is left as it was).
update locations
set address = jsonb_strip_nulls(
  (address - 'line1' - 'line2')
  || jsonb_build_object(
    'addressLine1', coalesce(address -> 'addressLine1', address -> 'line1'),
    'addressLine2', coalesce(address -> 'addressLine2', address -> 'line2'))
  || jsonb_build_object(
    'country', case when jsonb_typeof(address -> 'country') = 'string' then to_jsonb(upper(address ->> 'country')) else address -> 'country' end,
    'state', case when jsonb_typeof(address -> 'state') = 'string' then to_jsonb(upper(address ->> 'state')) else address -> 'state' end)
)
where address is not null and jsonb_typeof(address) = 'object';
