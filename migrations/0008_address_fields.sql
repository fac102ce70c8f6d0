-- Addresses use the legacy catalog's field names in camelCase (addressLine1, addressLine2, city,
-- state, postalCode, country) instead of line1/line2; country and state are ISO 3166 codes, in capitals.
update locations
set address = jsonb_strip_nulls(
  (address - 'line1' - 'line2')
  || jsonb_build_object('addressLine1', address -> 'line1', 'addressLine2', address -> 'line2')
  || jsonb_build_object('country', upper(address ->> 'country'), 'state', upper(address ->> 'state'))
)
where address is not null and jsonb_typeof(address) = 'object';
