-- The company's booking page and embed settings (PUT /v3/company `bookingPage`): brand colour,
-- logo, fee currency and the custom appointment fields the page asks for. Read by
-- GET /v3/public/company, so only what any visitor may see belongs here.
alter table companies add column booking_page jsonb not null default '{}';
