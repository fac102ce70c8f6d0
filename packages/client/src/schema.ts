/**
 * GENERATED FILE, do not edit: `npm run client:generate` (scripts/generate-client.ts) writes it with
 * openapi-typescript from the /openapi.json the app serves. test/generated-client.test.ts fails when
 * it no longer matches the routes.
 */

export interface paths {
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The OpenAPI 3.1 document; with a docs handoff token as Bearer, personalised for its company */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a dashboard user */
        post: operations["signUp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sign in; returns the dashboard JWT */
        post: operations["logIn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in dashboard user and the companies they belong to */
        get: operations["getCurrentUser"];
        /** Change the signed-in user's profile (name, password) */
        put: operations["updateCurrentUser"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/me/identities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Link an identity provider account to the signed-in user
         * @description An account that has a password is never linked to an identity provider by email alone. Its owner signs in and sends an identity token of the configured provider here; from then on that provider account signs in as this user.
         */
        post: operations["linkIdentity"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/generateRefreshToken": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mint a long-lived refresh token (Owner only) */
        post: operations["generateRefreshToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Exchange a refresh token for a new dashboard access token (the refresh token is rotated) */
        post: operations["refreshAccessToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/docsAuth": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Get a docs handoff token that opens /docs personalised for the company
         * @description The token opens /docs only; it is refused (401) on every /v3 route.
         */
        post: operations["createDocsToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/company": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's company */
        get: operations["getCompany"];
        /** Change company settings (fields given; the rest stay) */
        put: operations["updateCompany"];
        /**
         * Create a company; the caller becomes its Owner
         * @description Needs only the dashboard JWT. The response carries the API key, shown this once.
         */
        post: operations["createCompany"];
        delete?: never;
        options?: never;
        head?: never;
        /** Change company settings (fields given; the rest stay) */
        patch: operations["patchCompany"];
        trace?: never;
    };
    "/v3/companies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Companies of the caller
         * @description A dashboard user sees the companies they belong to; a machine token sees its bound company. `search` matches the start of the name, ignoring case.
         */
        get: operations["listCompanies"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/company/apiKey": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rotate the company API key (Owner or Admin); the old key stops working at once */
        post: operations["rotateApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/company/publicClientId": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Rotate the public client id (Owner or Admin); the old one becomes invalid */
        post: operations["rotatePublicClientId"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/oauth/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Get a machine access token (OAuth 2.0 client credentials)
         * @description Form body (application/x-www-form-urlencoded; JSON is accepted too). Credentials in the body or as HTTP Basic. scope is "read", "write" or "read write"; omitted or blank gives both. The token is an HS256 JWT lasting one hour; there is no refresh token.
         */
        post: operations["getMachineToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/clientId": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a client id and secret (Owner or Admin); the secret is shown once */
        post: operations["createClientId"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/clientIds": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the company's client ids (never their secrets) */
        get: operations["listClientIds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/clientId/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a client id: no token is issued for it again, and its live tokens stop working */
        delete: operations["revokeClientId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/locations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Locations of the company, with their address and opening hours */
        get: operations["listPublicLocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/services": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Services offered online (showOnline), optionally at one location */
        get: operations["listPublicServices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/resources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The resources a visitor may choose for a service at a location (the ones availability and hold may pick), by name */
        get: operations["listPublicResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/company": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The company behind the public client id, as a booking page shows it */
        get: operations["getPublicCompany"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/location": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a location */
        post: operations["createLocation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/locations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List locations (in the caller's location scope) */
        get: operations["listLocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/location/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a location with its address, company, services and resources */
        get: operations["getLocation"];
        /** Change a location (fields given; the rest stay) */
        put: operations["updateLocation"];
        post?: never;
        /** Archive a location: later reads give 404, lists omit it, history stays */
        delete: operations["archiveLocation"];
        options?: never;
        head?: never;
        /** Change a location (fields given; the rest stay) */
        patch: operations["patchLocation"];
        trace?: never;
    };
    "/v3/service": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a service */
        post: operations["createService"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/services": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List services (in the caller's location scope) */
        get: operations["listServices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/service/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a service with its company, locations and resources */
        get: operations["getService"];
        /** Change a service (fields given; the rest stay) */
        put: operations["updateService"];
        post?: never;
        /** Archive a service */
        delete: operations["archiveService"];
        options?: never;
        head?: never;
        /** Change a service (fields given; the rest stay) */
        patch: operations["patchService"];
        trace?: never;
    };
    "/v3/resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a resource (a person or thing that is booked) */
        post: operations["createResource"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List resources (in the caller's location scope; a Resource-role user sees only their own) */
        get: operations["listResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a resource with its company, locations and services */
        get: operations["getResource"];
        /** Change a resource (fields given; a Resource-role user may change only their own, not its links) */
        put: operations["updateResource"];
        post?: never;
        /** Archive a resource */
        delete: operations["archiveResource"];
        options?: never;
        head?: never;
        /** Change a resource (fields given; a Resource-role user may change only their own, not its links) */
        patch: operations["patchResource"];
        trace?: never;
    };
    "/v3/customer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create a customer (email unique in the company: a duplicate is 409) */
        post: operations["createCustomer"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/customers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List customers */
        get: operations["listCustomers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/customer/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a customer */
        get: operations["getCustomer"];
        /** Change a customer (fields given; the rest stay) */
        put: operations["updateCustomer"];
        post?: never;
        /** Archive a customer (a missing id is 400) */
        delete: operations["archiveCustomer"];
        options?: never;
        head?: never;
        /** Change a customer (fields given; the rest stay) */
        patch: operations["patchCustomer"];
        trace?: never;
    };
    "/v3/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard users of the company (Owner or Admin) */
        get: operations["listUsers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/users/setUsers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Update members by email; invite anyone else
         * @description A member of the company has role and access changed at once (data). Anyone else, with an account or not, is sent an invitation by email (invitations) and becomes a member only by accepting it at POST /v3/auth/acceptInvitation with the mailed token. Owner may assign any role; Admin may not assign Owner or change another Admin's role. At least one Owner must remain. All changes apply together or not at all. Dashboard users only: machine tokens get 403.
         */
        post: operations["setUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/users/adjustUsers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Change role and access of existing dashboard users, by user id */
        post: operations["adjustUsers"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a member from the company
         * @description Owner removes anyone; Admin removes Users, Resource-role users and themselves. The last Owner cannot be removed. The member's refresh tokens for the company and the client credentials they created are revoked.
         */
        delete: operations["removeUser"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/auth/acceptInvitation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Accept an invitation with the token mailed to the invited address
         * @description The token proves the caller reads mail at the address. No account yet: password (and optionally name) make one. An account that never confirmed its address: password is required and replaces the old one, ending its sessions. A confirmed account: send no password; sign in with the existing one.
         */
        post: operations["acceptInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/blocks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List one-off blocks by start time (in the caller's location scope) */
        get: operations["listBlocks"];
        put?: never;
        /** Create a one-off block of a location, a resource or a service */
        post: operations["createBlock"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/blocks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a one-off block */
        delete: operations["deleteBlock"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/recurringBlock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List recurring blocks (in the caller's location scope) */
        get: operations["listRecurringBlocks"];
        put?: never;
        /** Create a recurring block */
        post: operations["createRecurringBlock"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/recurringBlock/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a recurring block */
        get: operations["getRecurringBlock"];
        /** Change a recurring block (fields given; the rest stay) */
        put: operations["updateRecurringBlock"];
        post?: never;
        /** Delete a recurring block */
        delete: operations["deleteRecurringBlock"];
        options?: never;
        head?: never;
        /** Change a recurring block (fields given; the rest stay) */
        patch: operations["patchRecurringBlock"];
        trace?: never;
    };
    "/v3/unavailability/holiday": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List holidays by date (in the caller's location scope) */
        get: operations["listHolidays"];
        put?: never;
        /** Close a location for a whole day */
        post: operations["createHoliday"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/holiday/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a holiday */
        delete: operations["deleteHoliday"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/weeklyAllocation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the weekly allocations of exactly this scope (LocationId, and ServiceId and ResourceId or their absence) */
        get: operations["listWeeklyAllocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/weeklyAllocation/setWeeklyAllocations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the whole set of weekly allocations of exactly this scope */
        post: operations["setWeeklyAllocations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/singleAllocation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the single-date allocations of exactly this scope (LocationId, and ServiceId and ResourceId or their absence) */
        get: operations["listSingleAllocations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/singleAllocation/setSingleAllocations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the whole set of single-date allocations of exactly this scope */
        post: operations["setSingleAllocations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every interval that removes availability, one row each (not merged)
         * @description At least one of LocationIds, ResourceIds or ServiceId. Dates are read in the first location's zone, else the first resource's, else UTC; at most 31 days.
         */
        get: operations["listUnavailability"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/unavailability/calendar": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Deprecated: the same as GET /v3/unavailability
         * @deprecated
         * @description At least one of LocationIds, ResourceIds or ServiceId. Dates are read in the first location's zone, else the first resource's, else UTC; at most 31 days.
         */
        get: operations["listUnavailabilityCalendar"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/availability": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Open slots for a public booking page (services shown online only) */
        get: operations["searchPublicAvailability"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/availability": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Open slots of a service at a location
         * @description Slots start every bookingInterval minutes from the start of each open window, in the location's time zone; times are UTC instants. An empty result is a valid 200; availableDays says why a day has no slot.
         */
        get: operations["searchAvailability"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Book a slot directly (status BK); emits NEW_APPOINTMENT
         * @description A slot taken meanwhile is a 400 (BOOKING-105).
         */
        post: operations["createAppointment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/hold": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Hold a slot for checkout (status IN, expiresAt = now + the location's bookingTimerMinutes)
         * @description A slot taken meanwhile is a 400 (BOOKING-105).
         */
        post: operations["holdAppointment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One appointment */
        get: operations["getAppointment"];
        /** Change notes, custom fields or the customer; the customer limits are checked again */
        put: operations["updateAppointment"];
        post?: never;
        /** Delete a hold (IN only) */
        delete: operations["deleteHold"];
        options?: never;
        head?: never;
        /** Change notes, custom fields or the customer; the customer limits are checked again */
        patch: operations["patchAppointment"];
        trace?: never;
    };
    "/v3/appointment/{id}/reserve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Reserve a hold (IN → RS); allowPaddingOverflow and ignoreExternalEvents may be chosen here and are kept */
        put: operations["reserveAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/{id}/book": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Book a hold (IN → BK, NEW_APPOINTMENT) or a reservation (RS → BK, NEW_APPOINTMENT and APPOINTMENT_CONFIRMED); slot and limits are checked again */
        put: operations["bookAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/{id}/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Confirm: sets confirmed on BK, books RS; idempotent (APPOINTMENT_CONFIRMED once) */
        put: operations["confirmAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Cancel (BK or RS → CN); emits APPOINTMENT_CANCELLED */
        put: operations["cancelAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointment/{id}/reschedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Reschedule (BK → RE plus a new BK, linked both ways); returns the replacement */
        put: operations["rescheduleAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Appointments, page by page (with total); (page - 1) * limit at most 10,000 */
        get: operations["listAppointments"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/appointments/cursor": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Appointments by cursor: the first request sends filters, sort, order and limit; every later one only cursor
         * @description The cursor is signed, bound to the company, the filters and the position, and expires one hour after the first page. nextCursor is null on the last page.
         */
        get: operations["listAppointmentsByCursor"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/appointment/hold": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Hold a slot from a public booking page (status IN); only services shown online */
        post: operations["holdPublicAppointment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/public/appointment/{id}/book": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Book a hold made by a public booking page, for the customer given by name, email and phone, with the answers to the custom fields the company's page asks */
        put: operations["bookPublicAppointment"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the webhooks of a location (rows with destinations stored before the rules stay visible) */
        get: operations["listWebhooks"];
        put?: never;
        /** Create a webhook at a location (at most 20 per location) */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/webhook/setWebhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace every webhook of a location in one transaction (an empty list removes them all) */
        post: operations["setWebhooks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/webhook/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Change a webhook (fields given; headers and triggers replace the stored ones) */
        put: operations["updateWebhook"];
        post?: never;
        /** Delete a webhook and its delivery records */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /** Change a webhook (fields given; headers and triggers replace the stored ones) */
        patch: operations["patchWebhook"];
        trace?: never;
    };
    "/v3/webhook/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Delivery attempts of a webhook, newest first */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/emailTemplates": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the company's own templates of a channel (default EMAIL); types without one use the platform default */
        get: operations["listTemplates"];
        put?: never;
        /** Save the template of (type, recipientType, channel): 201 when created, 200 when it replaced the existing one */
        post: operations["saveTemplate"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/emailTemplates/defaults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the platform default templates of a channel (default EMAIL): what is sent when the company has no template */
        get: operations["listDefaultTemplates"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/emailTemplates/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a company's template (the platform default applies again) */
        delete: operations["deleteTemplate"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The notifications log: every email and SMS built for appointment events, sent or not, newest first */
        get: operations["listNotifications"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendar": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Connect an external calendar to a resource
         * @description google and microsoft: `{provider, redirectUrl, useOnSchedCalendarSelection}` answers `status: "pending"` and an `authUrl` to open in the user's browser (OAuth 2.0 with PKCE; the provider returns to GET /v3/calendar/callback, which sends the browser on to redirectUrl). caldav: `{provider, url, username, password}` is checked by a real PROPFIND and answers `status: "connected"`. Secrets are stored encrypted and never returned.
         */
        post: operations["connectExternalCalendar"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/calendar/callback": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OAuth callback of Google and Microsoft (the provider sends the browser here)
         * @description No credentials: the signed, single-use state (15 minutes) names the connection. Redirects (302) to the redirectUrl with `?code=<one-time selection code>&connectionId=` when useOnSchedCalendarSelection was true, else `?status=connected&connectionId=`; a provider error returns as `?status=error&error=`. A bad, expired or reused state is 400.
         */
        get: operations["externalCalendarCallback"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/calendar/selectionSession": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Exchange a one-time selection code for a Calendar Selection Token
         * @description The code comes from the callback's redirect; it works once, for 10 minutes. The token lasts 15 minutes and works only on list, select and disconnect of its connection.
         */
        post: operations["createCalendarSelectionSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendars": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The resource's external calendar connections */
        get: operations["listExternalCalendarConnections"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendars/list": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The calendars of the connected account
         * @description Without provider, the provider is inferred: exactly one provider must be connected. Accepts a Calendar Selection Token.
         */
        get: operations["listExternalCalendars"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendars/select": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Choose the calendars read as busy time, and the one booked appointments are written to
         * @description Answers the list as GET .../externalCalendars/list does. An unknown calendar id is 400 naming it. The new selection is read at once. Accepts a Calendar Selection Token.
         */
        post: operations["selectExternalCalendars"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendars/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Read the resource's selected calendars now */
        post: operations["syncExternalCalendars"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/resource/{id}/externalCalendar/{connectionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Disconnect: the connection, its tokens (revoked at the provider where it can be) and its busy intervals go */
        delete: operations["disconnectExternalCalendar"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/mapping/ids": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * v1 ids to v3 ids (only the keys asked)
         * @description Each query key is a v1 id. Scalars answer the v3 id or null; `allocationId` answers an array, since one v1 allocation becomes one weekly row per weekday or several single rows. v1 ids are compared as decimal strings (`"0012"` and `"12"` are the same id). Only the caller's company is searched.
         */
        get: operations["mapLegacyIds"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/migration/sync": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import a v1 company (live API or export document)
         * @description Idempotent on legacyId: records the company already has are skipped, so a run after a partial failure completes the rest. Each record (or small batch) is its own transaction: a bad record fails alone and is listed in `failed`. `dryRun: true` reports and writes nothing. An export of up to 2,000 records (MIGRATION_SYNC_RECORD_LIMIT) answers 200 with the report; a larger one, an `api` source, or `Prefer: respond-async` answers 202 with a job to follow at GET /v3/migration/jobs/{id}. One writing run per company at a time: another answers 409. docs/migration.md explains the procedure.
         */
        post: operations["migrateFromV1"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/migration/jobs/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A migration job: progress per kind, then the report
         * @description A job of another company is not found (404). `status` is running, succeeded or failed; a failed job says why in `error` and what landed in `report`.
         */
        get: operations["getMigrationJob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/manage/appointment": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The manage link's appointment, and whether the customer may cancel or reschedule it now */
        get: operations["getManagedAppointment"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/manage/appointment/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel the manage link's appointment (BK or RS → CN), within the service's notice; sends the cancellation with its calendar entry */
        post: operations["cancelManagedAppointment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/manage/appointment/reschedule": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Move the manage link's appointment to a slot from GET /v3/manage/availability (BK → RE plus a new BK); the old link then answers 410 */
        post: operations["rescheduleManagedAppointment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v3/manage/availability": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Open slots of the appointment's service at its location: the slot picker of a reschedule */
        get: operations["searchManagedAvailability"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Every failure has this body. The HTTP status is not repeated in it. */
        ErrorBody: {
            /** @enum {boolean} */
            success: false;
            message: string;
            errors: {
                /** @enum {string} */
                type: "field";
                location: "body" | "query" | "params" | "headers";
                /** @description Dot notation, for example Customer.email */
                path: string;
                msg: string;
                /** @description Legacy (v1) catalog code where one applies */
                code?: string;
            }[];
            code?: string;
            /** @description Present on 500: quote it to support */
            requestId?: string;
        };
        Company: {
            /** Format: uuid */
            id: string;
            name: string;
            /** @description Sent by public booking pages as x-client-id */
            publicClientId: string;
            /** @description Hosts whose Origin may call /v3/public/* */
            allowedDomains: string[];
            disableEmailNotifications: boolean;
            disableSmsNotifications: boolean;
            /** @description Legacy (v1): true only when both channels are disabled */
            disableEmailAndSmsNotifications: boolean;
            suspended: boolean;
            /** @description Minutes before the start at which APPOINTMENT_REMINDER is sent for booked appointments (a location may override) */
            reminderOffsets: number[];
            /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
            bookingPage: {
                brandColor?: string | null;
                logoUrl?: string | null;
                currency?: string | null;
                /** @description Custom fields the booking page asks, in this order */
                fields?: {
                    /**
                     * @description The appointment custom field the answer is stored in
                     * @enum {string}
                     */
                    name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                    /** @description The question shown to the visitor */
                    label: string;
                    required: boolean;
                }[];
            };
            /** @description With include=locations on lists */
            locations?: {
                /** Format: uuid */
                id: string;
                name: string;
                timezoneName: string;
            }[];
            /** @description Start of the API key, to recognise it. Omitted for roles that may not see credentials. */
            apiKeyPrefix?: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        ClientCredential: {
            /**
             * Format: uuid
             * @description Record id, used to revoke
             */
            id: string;
            clientId: string;
            name: string | null;
            /** Format: date-time */
            createdAt: string;
            lastUsedAt: string | null;
            revokedAt: string | null;
        };
        /** @description Lists omit address, company, services and resources unless `include` names them; a single read has them all. */
        Location: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            name: string;
            timezoneName: string;
            phone: string | null;
            email: string | null;
            weeklyAvailability: {
                mon?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                tue?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                wed?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                thu?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                fri?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sat?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sun?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
            } | null;
            bookingTimerMinutes: number;
            reminderOffsets: number[] | null;
            legacyId: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            address?: {
                addressLine1?: string;
                addressLine2?: string;
                city?: string;
                /** @description The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH) */
                state?: string;
                postalCode?: string;
                /** @description ISO 3166-1 alpha-2 country code, for example GB (stored in capitals) */
                country: string;
            } | null;
            company?: {
                /** Format: uuid */
                id: string;
                name: string;
            };
            services?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
            resources?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
        };
        Service: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            name: string;
            description: string | null;
            /** @description Appointment length in minutes */
            duration: number;
            /** @description Customers may choose the duration between durationMin and durationMax in steps of durationInterval */
            durationSelect: boolean;
            durationMin: number | null;
            durationMax: number | null;
            durationInterval: number | null;
            /**
             * @description schedule: weekly schedules; allocation: only allocated windows
             * @enum {string}
             */
            availabilityType: "schedule" | "allocation";
            weeklyAvailability: {
                mon?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                tue?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                wed?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                thu?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                fri?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sat?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sun?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
            } | null;
            /**
             * @description How far ahead booking is allowed, with bookAheadValue
             * @enum {string}
             */
            bookAheadUnit: "none" | "days" | "weeks" | "months";
            bookAheadValue: number | null;
            /** @description Minimum lead time in minutes */
            bookInAdvance: number;
            /** @description Active appointments (BK and unexpired IN) per customer; 0 = unlimited */
            bookingLimit: number;
            /** @description Lifetime appointments per customer (RE not counted); 0 = unlimited */
            maxBookingLimit: number;
            /** @description Lifetime appointments per customer and resource (RE not counted); 0 = unlimited */
            maxResourceBookingLimit: number;
            /** @description Bookings of the service per day; 0 = unlimited */
            dailyBookingLimitCount: number;
            /** @description Booked minutes of the service per day; 0 = unlimited */
            dailyBookingLimitMinutes: number;
            bookingInterval: number | null;
            /** @description Buffer minutes after each appointment */
            padding: number;
            /** @description Concurrent capacity at the same instant */
            bookingsPerSlot: number;
            feeAmount: number | null;
            feeTaxable: boolean;
            cancellationFeeAmount: number | null;
            cancellationFeeTaxable: boolean;
            nonRefundable: boolean;
            imageUrl: string | null;
            /** @description Offered on public booking pages */
            showOnline: boolean;
            /** @enum {string} */
            roundRobin: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
            /** @description Default for holds and reservations */
            allowPaddingOverflow: boolean;
            /** @description Default for holds and reservations */
            ignoreExternalEvents: boolean;
            legacyId: string | null;
            locationIds: string[];
            field1: string | null;
            field2: string | null;
            field3: string | null;
            field4: string | null;
            field5: string | null;
            field6: string | null;
            field7: string | null;
            field8: string | null;
            field9: string | null;
            field10: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            company?: {
                /** Format: uuid */
                id: string;
                name: string;
            };
            locations?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
            resources?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
        };
        Resource: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            name: string;
            email: string | null;
            phone: string | null;
            timezoneName: string | null;
            weeklyAvailability: {
                mon?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                tue?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                wed?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                thu?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                fri?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sat?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
                sun?: {
                    /** @description HH:MM */
                    start: string;
                    /** @description HH:MM; 24:00 ends at midnight */
                    end: string;
                }[];
            } | null;
            bookingLimit: number;
            legacyId: string | null;
            locationIds: string[];
            serviceIds: string[];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            company?: {
                /** Format: uuid */
                id: string;
                name: string;
            };
            locations?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
            services?: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
        };
        Customer: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            firstName: string;
            lastName: string | null;
            email: string;
            phone: string | null;
            notes: string | null;
            legacyId: string | null;
            field1: string | null;
            field2: string | null;
            field3: string | null;
            field4: string | null;
            field5: string | null;
            field6: string | null;
            field7: string | null;
            field8: string | null;
            field9: string | null;
            field10: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DashboardUser: {
            /**
             * Format: uuid
             * @description User id
             */
            id: string;
            email: string;
            name: string;
            /** @enum {string} */
            role: "Owner" | "Admin" | "User" | "Resource";
            locationAccessMode: string;
            allowedLocationIds: string[];
            linkedResourceId: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** @description A one-off block of a location, a resource or a service */
        UnavailabilityBlock: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            locationId: string | null;
            resourceId: string | null;
            serviceId: string | null;
            /**
             * Format: date-time
             * @description UTC
             */
            startTime: string;
            /**
             * Format: date-time
             * @description UTC
             */
            endTime: string;
            reason: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        /** @description A structured recurrence of wall-clock times in `iana` */
        RecurringBlock: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            name: string;
            frequency: string;
            interval: number;
            /** Format: date */
            startDate: string;
            endDate: string | null;
            startTime: string;
            endTime: string;
            iana: string;
            weekdays: number[];
            dayOfMonth: number | null;
            locationId: string | null;
            resourceId: string | null;
            serviceId: string | null;
            legacyId: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** @description A whole day on which a location is closed */
        Holiday: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** Format: uuid */
            locationId: string;
            /** Format: date */
            date: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
        };
        WeeklyAllocation: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** Format: uuid */
            locationId: string;
            serviceId: string | null;
            resourceId: string | null;
            day: string;
            start: string;
            end: string;
            bookingsPerSlot: number | null;
            legacyId: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        SingleAllocation: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** Format: uuid */
            locationId: string;
            serviceId: string | null;
            resourceId: string | null;
            /** Format: date */
            date: string;
            start: string;
            end: string;
            bookingsPerSlot: number | null;
            legacyId: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        Availability: {
            timezoneName: string;
            availableTimes: {
                /** Format: date-time */
                startTime: string;
                /** Format: date-time */
                endTime: string;
                resourceIds: string[];
                /** @description Bookings still possible at this time with the listed resources */
                remaining: number;
            }[];
            availableDays: {
                /** Format: date */
                date: string;
                available: boolean;
                /** @description Why the day has no slot, for example `holiday` or `no free time`; null when it has one */
                reason: string | null;
                /** @description With reason `holiday`: the name of the location's holiday, for example Christmas Day */
                holidayName?: string;
            }[];
        };
        UnavailabilityRow: {
            /** Format: date-time */
            start_time: string;
            /** Format: date-time */
            end_time: string;
            /** @enum {string} */
            source: "weekly" | "recurring" | "appointment" | "holiday" | "block";
            /** @enum {string} */
            entity_type: "location" | "resource" | "service";
            /** Format: uuid */
            entity_id: string;
            /** @description The block, recurring block, holiday or appointment; null for weekly rows */
            source_id: string | null;
            external_transparency: string | null;
            external_event_type: string | null;
            external_busy: boolean | null;
        };
        Appointment: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** Format: uuid */
            locationId: string;
            /** Format: uuid */
            serviceId: string;
            customerId: string | null;
            resourceIds: string[];
            /**
             * @description IN held, RS reserved, BK booked, CN cancelled, RE rescheduled away
             * @enum {string}
             */
            status: "IN" | "RS" | "BK" | "CN" | "RE";
            /** Format: date-time */
            startTime: string;
            /** Format: date-time */
            endTime: string;
            /** @description Minutes */
            duration: number;
            /** @description Minutes after endTime that stay occupied (the service's padding when booked) */
            padding: number;
            /** @description The location's IANA time zone */
            timezoneName: string;
            expiresAt: string | null;
            confirmed: boolean;
            allowPaddingOverflow: boolean;
            ignoreExternalEvents: boolean;
            notes: string | null;
            field1: string | null;
            field2: string | null;
            field3: string | null;
            field4: string | null;
            field5: string | null;
            field6: string | null;
            field7: string | null;
            field8: string | null;
            field9: string | null;
            field10: string | null;
            rescheduledFromId: string | null;
            rescheduledToId: string | null;
            legacyId: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        Webhook: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** Format: uuid */
            locationId: string;
            url: string;
            /** @description Shown only to company callers allowed to manage webhooks (they may carry a shared secret) */
            headers: {
                [key: string]: string;
            };
            triggers: ("NEW_APPOINTMENT" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER")[];
            active: boolean;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        WebhookDelivery: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            webhookId: string;
            /** Format: uuid */
            eventId: string;
            trigger: string;
            /** Format: uuid */
            appointmentId: string;
            /** @description The URL the attempt went to */
            url: string;
            /**
             * @description pending while the attempt runs; delivered on 2xx; failed otherwise (refused destinations included); interrupted: the attempt was cut off (a crash) and the receiver may or may not have got it; never repeated
             * @enum {string}
             */
            outcome: "pending" | "delivered" | "failed" | "interrupted";
            statusCode: number | null;
            error: string | null;
            durationMs: number | null;
            address: string | null;
            /** Format: date-time */
            createdAt: string;
            finishedAt: string | null;
        };
        NotificationTemplate: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            companyId: string;
            /** @enum {string} */
            type: "APPOINTMENT_BOOKED" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER" | "EXTERNAL_CALENDAR_EVENT";
            /** @enum {string} */
            recipientType: "CUSTOMER" | "RESOURCE" | "BUSINESS";
            /**
             * @description EMAIL or SMS
             * @enum {string}
             */
            channel: "EMAIL" | "SMS";
            /** @description Handlebars; for SMS stored but never sent */
            subject: string;
            /** @description Handlebars; plain text */
            body: string;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DefaultNotificationTemplate: {
            /** @enum {string} */
            type: "APPOINTMENT_BOOKED" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER" | "EXTERNAL_CALENDAR_EVENT";
            /** @enum {string} */
            recipientType: "CUSTOMER" | "RESOURCE" | "BUSINESS";
            /**
             * @description EMAIL or SMS
             * @enum {string}
             */
            channel: "EMAIL" | "SMS";
            subject: string;
            body: string;
            /** @enum {boolean} */
            isDefault: true;
        };
        Notification: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            eventId: string;
            /** Format: uuid */
            appointmentId: string;
            /** @description Template type, for example APPOINTMENT_BOOKED */
            type: string;
            /** @enum {string} */
            channel: "EMAIL" | "SMS";
            /** @enum {string} */
            recipientType: "CUSTOMER" | "RESOURCE" | "BUSINESS";
            /** @description Email address or phone number */
            recipient: string;
            subject: string | null;
            body: string;
            /**
             * @description not_sent: channel off or not configured (see reason); failed: the provider refused or could not be reached; interrupted: the sending was cut off (a crash) and it is unknown whether the provider got it; never repeated
             * @enum {string}
             */
            status: "pending" | "sent" | "not_sent" | "failed" | "interrupted";
            reason: string | null;
            providerId: string | null;
            /** Format: date-time */
            createdAt: string;
            finishedAt: string | null;
        };
        ExternalCalendarConnection: {
            /** Format: uuid */
            id: string;
            /** @enum {string} */
            provider: "google" | "microsoft" | "caldav";
            /** @enum {string} */
            status: "pending" | "connected" | "error";
            lastSyncedAt: string | null;
            lastError: string | null;
            writeCalendarId: string | null;
        };
        ExternalCalendar: {
            id: string;
            name: string;
            primary: boolean;
            selected: boolean;
            canWrite: boolean;
            /** @description Booked appointments are written to this calendar */
            write: boolean;
        };
        ManagedAppointment: {
            /** Format: uuid */
            id: string;
            /**
             * @description BK booked or RS reserved; CN in the answer of the cancel itself (afterwards the link answers 410)
             * @enum {string}
             */
            status: "IN" | "RS" | "BK" | "CN" | "RE";
            /** Format: date-time */
            startTime: string;
            /** Format: date-time */
            endTime: string;
            /** @description Minutes */
            duration: number;
            /** @description The location's IANA time zone */
            timezoneName: string;
            service: {
                /** Format: uuid */
                id: string;
                name: string;
            };
            location: {
                /** Format: uuid */
                id: string;
                name: string;
                timezoneName: string;
            };
            resources: {
                /** Format: uuid */
                id: string;
                name: string;
            }[];
            cancel: {
                /** @description Whether the customer may cancel now */
                allowed: boolean;
                reason: string | null;
            };
            reschedule: {
                /** @description Whether the customer may reschedule now */
                allowed: boolean;
                reason: string | null;
            };
        };
        MigrationReport: {
            dryRun: boolean;
            /** @description Records created by this run (a dry run: that would be created). Allocations count v3 rows (one per weekday or date). */
            created: {
                locations: number;
                services: number;
                resources: number;
                weeklyAllocations: number;
                singleAllocations: number;
                recurringBlocks: number;
                customers: number;
                appointments: number;
            };
            /** @description Records the company already had (same legacyId, or for customers the same email) */
            skipped: {
                locations: number;
                services: number;
                resources: number;
                weeklyAllocations: number;
                singleAllocations: number;
                recurringBlocks: number;
                customers: number;
                appointments: number;
            };
            /** @description Records that did not migrate, each with the reason */
            failed: {
                kind: "locations" | "services" | "resources" | "weeklyAllocations" | "singleAllocations" | "recurringBlocks" | "customers" | "appointments";
                /** @description The v1 id (null when the record has none that can be read) */
                legacyId: string | null;
                message: string;
            }[];
            /** @description Records left behind on purpose: deleted in v1, ended allocations, past appointments, v1 holds */
            ignored: {
                locations: number;
                services: number;
                resources: number;
                weeklyAllocations: number;
                singleAllocations: number;
                recurringBlocks: number;
                customers: number;
                appointments: number;
            };
            /** @description Records that migrated with something dropped or changed (at most 1000) */
            warnings: {
                kind: "locations" | "services" | "resources" | "weeklyAllocations" | "singleAllocations" | "recurringBlocks" | "customers" | "appointments";
                /** @description The v1 id (null when the record has none that can be read) */
                legacyId: string | null;
                message: string;
            }[];
            /** @description Warnings beyond the first 1000 */
            warningsOmitted: number;
        };
    };
    responses: {
        /** @description Rate limited: the caller spent this route family's budget (or the appointment lists are at capacity). Wait Retry-After seconds. */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                "RateLimit-Limit": components["headers"]["RateLimit-Limit"];
                "RateLimit-Remaining": components["headers"]["RateLimit-Remaining"];
                "RateLimit-Reset": components["headers"]["RateLimit-Reset"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "message": "API write rate limit exceeded",
                 *       "errors": []
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
        /** @description The database is down, restarting, read-only after a failover, or too busy to answer in time; retry after Retry-After seconds (the same request will succeed once it is back, with no restart). */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "message": "The service cannot reach its database right now, or it is too busy to answer in time; retry in a few seconds",
                 *       "errors": [],
                 *       "requestId": "b1d9c2a4-5f7e-4c1a-9d2b-3e4f5a6b7c8d"
                 *     }
                 */
                "application/json": components["schemas"]["ErrorBody"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description Seconds to wait before trying again */
        "Retry-After": number;
        /** @description Requests allowed in the window of the budget that binds */
        "RateLimit-Limit": number;
        /** @description Requests left in that window (0 here) */
        "RateLimit-Remaining": number;
        /** @description Seconds until the window resets */
        "RateLimit-Reset": number;
        /** @description The budget as `limit;w=windowSeconds` */
        "RateLimit-Policy": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This OpenAPI 3.1 document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        [key: string]: unknown;
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    signUp: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "owner@acme-dental.example",
                 *       "password": "correct horse battery",
                 *       "name": "Olivia Owner"
                 *     }
                 */
                "application/json": {
                    /** Format: email */
                    email: string;
                    /** @description 8 to 256 characters, not one of the most common passwords */
                    password: string;
                    name: string;
                };
            };
        };
        responses: {
            /** @description Success: Create a dashboard user */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        email: string;
                        name: string;
                        /** Format: date-time */
                        createdAt: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    logIn: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "email": "owner@acme-dental.example",
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Success: Sign in; returns the dashboard JWT */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "accessToken": "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl91c2UiOiJkYXNoYm9hcmQifQ.c2lnbmF0dXJl",
                     *       "tokenType": "Bearer",
                     *       "expiresIn": 3600
                     *     }
                     */
                    "application/json": {
                        /** @description The dashboard JWT */
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        /** @description Seconds */
                        expiresIn: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getCurrentUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: The signed-in dashboard user and the companies they belong to */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        email: string;
                        name: string;
                        /** Format: date-time */
                        createdAt: string;
                        companies: {
                            /** Format: uuid */
                            companyId: string;
                            companyName: string;
                            role: string;
                        }[];
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateCurrentUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Olivia Owner-Smith"
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /** @description 8 to 256 characters, not one of the most common passwords */
                    password?: string;
                    currentPassword?: string;
                };
            };
        };
        responses: {
            /** @description Success: Change the signed-in user's profile (name, password) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        email: string;
                        name: string;
                        /** Format: date-time */
                        createdAt: string;
                        /** @description After a password change only: a new dashboard JWT. Every session issued before the change (this one included) has ended, and every refresh token is revoked. */
                        accessToken?: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    linkIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "identityToken": "eyJhbGciOiJSUzI1NiIsImtpZCI6ImlkcC0xIn0.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIn0.c2lnbmF0dXJl"
                 *     }
                 */
                "application/json": {
                    identityToken: string;
                };
            };
        };
        responses: {
            /** @description Success: Link an identity provider account to the signed-in user */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        issuer: string;
                        subject: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    generateRefreshToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Mint a long-lived refresh token (Owner only) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        refreshToken: string;
                        /** @enum {string} */
                        tokenType: "refresh";
                        expiresIn: number;
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    refreshAccessToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "refresh_token": "eyJhbGciOiJIUzI1NiJ9.eyJ0b2tlbl91c2UiOiJyZWZyZXNoIn0.c2lnbmF0dXJl"
                 *     }
                 */
                "application/json": {
                    refresh_token: string;
                };
            };
        };
        responses: {
            /** @description Success: Exchange a refresh token for a new dashboard access token (the refresh token is rotated) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The dashboard JWT */
                        accessToken: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        /** @description Seconds */
                        expiresIn: number;
                        /** @description The rotated refresh token; the one sent is spent */
                        refreshToken: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createDocsToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Get a docs handoff token that opens /docs personalised for the company */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        docsToken: string;
                        expiresIn: number;
                        docsUrl: string;
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getCompany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The company */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Company"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateCompany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allowedDomains": [
                 *         "https://book.acme-dental.example",
                 *         "https://www.acme-dental.example"
                 *       ],
                 *       "bookingPage": {
                 *         "brandColor": "#0b6e4f",
                 *         "logoUrl": "https://www.acme-dental.example/logo.png",
                 *         "currency": "EUR",
                 *         "fields": [
                 *           {
                 *             "name": "field1",
                 *             "label": "Reason for the visit",
                 *             "required": true
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": {
                    name?: string;
                    allowedDomains?: string[];
                    disableEmailNotifications?: boolean;
                    disableSmsNotifications?: boolean;
                    /** @description Minutes before the start, for example [1440, 60]; at most five, each 1 to 10080 */
                    reminderOffsets?: number[];
                    /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                    bookingPage?: {
                        brandColor?: string | null;
                        logoUrl?: string | null;
                        currency?: string | null;
                        /** @description Custom fields the booking page asks, in this order */
                        fields?: {
                            /**
                             * @description The appointment custom field the answer is stored in
                             * @enum {string}
                             */
                            name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                            /** @description The question shown to the visitor */
                            label: string;
                            required: boolean;
                        }[];
                    };
                    /**
                     * @deprecated
                     * @description Write only. When neither channel flag is in the body, both take this value.
                     */
                    disableNotifications?: boolean;
                };
            };
        };
        responses: {
            /** @description The company */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Company"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createCompany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Acme Dental",
                 *       "allowedDomains": [
                 *         "https://book.acme-dental.example"
                 *       ],
                 *       "reminderOffsets": [
                 *         1440,
                 *         60
                 *       ]
                 *     }
                 */
                "application/json": {
                    name: string;
                    allowedDomains?: string[];
                    disableEmailNotifications?: boolean;
                    disableSmsNotifications?: boolean;
                    /** @description Minutes before the start, for example [1440, 60]; at most five, each 1 to 10080 */
                    reminderOffsets?: number[];
                    /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                    bookingPage?: {
                        brandColor?: string | null;
                        logoUrl?: string | null;
                        currency?: string | null;
                        /** @description Custom fields the booking page asks, in this order */
                        fields?: {
                            /**
                             * @description The appointment custom field the answer is stored in
                             * @enum {string}
                             */
                            name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                            /** @description The question shown to the visitor */
                            label: string;
                            required: boolean;
                        }[];
                    };
                    /**
                     * @deprecated
                     * @description Write only. When neither channel flag is in the body, both take this value.
                     */
                    disableNotifications?: boolean;
                };
            };
        };
        responses: {
            /** @description Success: Create a company; the caller becomes its Owner */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        name: string;
                        /** @description Sent by public booking pages as x-client-id */
                        publicClientId: string;
                        /** @description Hosts whose Origin may call /v3/public/* */
                        allowedDomains: string[];
                        disableEmailNotifications: boolean;
                        disableSmsNotifications: boolean;
                        /** @description Legacy (v1): true only when both channels are disabled */
                        disableEmailAndSmsNotifications: boolean;
                        suspended: boolean;
                        /** @description Minutes before the start at which APPOINTMENT_REMINDER is sent for booked appointments (a location may override) */
                        reminderOffsets: number[];
                        /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                        bookingPage: {
                            brandColor?: string | null;
                            logoUrl?: string | null;
                            currency?: string | null;
                            /** @description Custom fields the booking page asks, in this order */
                            fields?: {
                                /**
                                 * @description The appointment custom field the answer is stored in
                                 * @enum {string}
                                 */
                                name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                                /** @description The question shown to the visitor */
                                label: string;
                                required: boolean;
                            }[];
                        };
                        /** @description With include=locations on lists */
                        locations?: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                            timezoneName: string;
                        }[];
                        /** @description Start of the API key, to recognise it. Omitted for roles that may not see credentials. */
                        apiKeyPrefix?: string;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Shown once. Only a hash is stored. */
                        apiKey: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchCompany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allowedDomains": [
                 *         "https://book.acme-dental.example",
                 *         "https://www.acme-dental.example"
                 *       ],
                 *       "bookingPage": {
                 *         "brandColor": "#0b6e4f",
                 *         "logoUrl": "https://www.acme-dental.example/logo.png",
                 *         "currency": "EUR",
                 *         "fields": [
                 *           {
                 *             "name": "field1",
                 *             "label": "Reason for the visit",
                 *             "required": true
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": {
                    name?: string;
                    allowedDomains?: string[];
                    disableEmailNotifications?: boolean;
                    disableSmsNotifications?: boolean;
                    /** @description Minutes before the start, for example [1440, 60]; at most five, each 1 to 10080 */
                    reminderOffsets?: number[];
                    /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                    bookingPage?: {
                        brandColor?: string | null;
                        logoUrl?: string | null;
                        currency?: string | null;
                        /** @description Custom fields the booking page asks, in this order */
                        fields?: {
                            /**
                             * @description The appointment custom field the answer is stored in
                             * @enum {string}
                             */
                            name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                            /** @description The question shown to the visitor */
                            label: string;
                            required: boolean;
                        }[];
                    };
                    /**
                     * @deprecated
                     * @description Write only. When neither channel flag is in the body, both take this value.
                     */
                    disableNotifications?: boolean;
                };
            };
        };
        responses: {
            /** @description The company */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Company"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listCompanies: {
        parameters: {
            query?: {
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Case-insensitive prefix of the name */
                search?: string;
                /** @description Comma-separated, any of: locations */
                include?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The company records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Company"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rotateApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Rotate the company API key (Owner or Admin); the old key stops working at once */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        name: string;
                        /** @description Sent by public booking pages as x-client-id */
                        publicClientId: string;
                        /** @description Hosts whose Origin may call /v3/public/* */
                        allowedDomains: string[];
                        disableEmailNotifications: boolean;
                        disableSmsNotifications: boolean;
                        /** @description Legacy (v1): true only when both channels are disabled */
                        disableEmailAndSmsNotifications: boolean;
                        suspended: boolean;
                        /** @description Minutes before the start at which APPOINTMENT_REMINDER is sent for booked appointments (a location may override) */
                        reminderOffsets: number[];
                        /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                        bookingPage: {
                            brandColor?: string | null;
                            logoUrl?: string | null;
                            currency?: string | null;
                            /** @description Custom fields the booking page asks, in this order */
                            fields?: {
                                /**
                                 * @description The appointment custom field the answer is stored in
                                 * @enum {string}
                                 */
                                name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                                /** @description The question shown to the visitor */
                                label: string;
                                required: boolean;
                            }[];
                        };
                        /** @description With include=locations on lists */
                        locations?: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                            timezoneName: string;
                        }[];
                        /** @description Start of the API key, to recognise it. Omitted for roles that may not see credentials. */
                        apiKeyPrefix?: string;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        /** @description Shown once. Only a hash is stored. */
                        apiKey: string;
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rotatePublicClientId: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The company */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Company"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMachineToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "grant_type": "client_credentials",
                 *       "client_id": "sw_client_4f1c2d3e",
                 *       "client_secret": "sw_secret_9a8b7c6d5e4f",
                 *       "scope": "read write"
                 *     }
                 */
                "application/x-www-form-urlencoded": {
                    /** @description client_credentials */
                    grant_type: string;
                    client_id?: string;
                    client_secret?: string;
                    scope?: string;
                };
                /**
                 * @example {
                 *       "grant_type": "client_credentials",
                 *       "client_id": "sw_client_4f1c2d3e",
                 *       "client_secret": "sw_secret_9a8b7c6d5e4f",
                 *       "scope": "read write"
                 *     }
                 */
                "application/json": {
                    /** @description client_credentials */
                    grant_type: string;
                    client_id?: string;
                    client_secret?: string;
                    scope?: string;
                };
            };
        };
        responses: {
            /** @description Success: Get a machine access token (OAuth 2.0 client credentials) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "access_token": "eyJhbGciOiJIUzI1NiJ9.eyJzY29wZSI6InJlYWQgd3JpdGUifQ.c2lnbmF0dXJl",
                     *       "token_type": "Bearer",
                     *       "expires_in": 3600,
                     *       "scope": "read write"
                     *     }
                     */
                    "application/json": {
                        access_token: string;
                        /** @enum {string} */
                        token_type: "Bearer";
                        expires_in: number;
                        scope: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createClientId: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Practice management sync"
                 *     }
                 */
                "application/json": {
                    name?: string;
                };
            };
        };
        responses: {
            /** @description Success: Create a client id and secret (Owner or Admin); the secret is shown once */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /**
                         * Format: uuid
                         * @description Record id, used to revoke
                         */
                        id: string;
                        clientId: string;
                        name: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        lastUsedAt: string | null;
                        revokedAt: string | null;
                        /** @description Shown once; only a hash is kept */
                        clientSecret: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listClientIds: {
        parameters: {
            query?: {
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The client credential records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ClientCredential"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    revokeClientId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listPublicLocations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Locations of the company, with their address and opening hours */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                            timezoneName: string;
                            address: {
                                addressLine1?: string;
                                addressLine2?: string;
                                city?: string;
                                /** @description The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH) */
                                state?: string;
                                postalCode?: string;
                                /** @description ISO 3166-1 alpha-2 country code, for example GB (stored in capitals) */
                                country: string;
                            } | null;
                            phone: string | null;
                            email: string | null;
                            weeklyAvailability: {
                                mon?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                tue?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                wed?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                thu?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                fri?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                sat?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                                sun?: {
                                    /** @description HH:MM */
                                    start: string;
                                    /** @description HH:MM; 24:00 ends at midnight */
                                    end: string;
                                }[];
                            } | null;
                        }[];
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listPublicServices: {
        parameters: {
            query?: {
                LocationId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Services offered online (showOnline), optionally at one location */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                            description: string | null;
                            duration: number;
                            durationSelect: boolean;
                            durationMin: number | null;
                            durationMax: number | null;
                            durationInterval: number | null;
                            feeAmount: number | null;
                            imageUrl: string | null;
                            /**
                             * @description How a hold without a chosen resource gets one: NONE needs the page to name one, RANDOM and BALANCED pick one, COMBINED takes them all
                             * @enum {string}
                             */
                            roundRobin: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                            locationIds: string[];
                        }[];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listPublicResources: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: The resources a visitor may choose for a service at a location (the ones availability and hold may pick), by name */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** Format: uuid */
                            id: string;
                            name: string;
                        }[];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getPublicCompany: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: The company behind the public client id, as a booking page shows it */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        name: string;
                        /** @description Booking page and embed settings (docs/api.md, Booking page settings) */
                        bookingPage: {
                            brandColor?: string | null;
                            logoUrl?: string | null;
                            currency?: string | null;
                            /** @description Custom fields the booking page asks, in this order */
                            fields?: {
                                /**
                                 * @description The appointment custom field the answer is stored in
                                 * @enum {string}
                                 */
                                name: "field1" | "field2" | "field3" | "field4" | "field5" | "field6" | "field7" | "field8" | "field9" | "field10";
                                /** @description The question shown to the visitor */
                                label: string;
                                required: boolean;
                            }[];
                        };
                    };
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createLocation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Main Street",
                 *       "timezoneName": "America/New_York",
                 *       "phone": "+12125550123",
                 *       "email": "frontdesk@acme-dental.example",
                 *       "address": {
                 *         "addressLine1": "120 Main Street",
                 *         "city": "New York",
                 *         "state": "NY",
                 *         "postalCode": "10001",
                 *         "country": "US"
                 *       },
                 *       "weeklyAvailability": {
                 *         "mon": [
                 *           {
                 *             "start": "09:00",
                 *             "end": "17:00"
                 *           }
                 *         ],
                 *         "tue": [
                 *           {
                 *             "start": "09:00",
                 *             "end": "17:00"
                 *           }
                 *         ],
                 *         "wed": [
                 *           {
                 *             "start": "09:00",
                 *             "end": "17:00"
                 *           }
                 *         ],
                 *         "thu": [
                 *           {
                 *             "start": "09:00",
                 *             "end": "17:00"
                 *           }
                 *         ],
                 *         "fri": [
                 *           {
                 *             "start": "09:00",
                 *             "end": "13:00"
                 *           }
                 *         ]
                 *       },
                 *       "bookingTimerMinutes": 10
                 *     }
                 */
                "application/json": {
                    name: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    timezoneName: string;
                    address?: {
                        addressLine1?: string;
                        addressLine2?: string;
                        city?: string;
                        /** @description The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH) */
                        state?: string;
                        postalCode?: string;
                        /** @description ISO 3166-1 alpha-2 country code, for example GB (stored in capitals) */
                        country: string;
                    } | null;
                    phone?: string | null;
                    email?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Minutes a hold lasts (1 to 30, default 10) */
                    bookingTimerMinutes?: number;
                    reminderOffsets?: number[] | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description Lists omit address, company, services and resources unless `include` names them; a single read has them all. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Main Street",
                     *       "timezoneName": "America/New_York",
                     *       "phone": "+12125550123",
                     *       "email": "frontdesk@acme-dental.example",
                     *       "weeklyAvailability": {
                     *         "mon": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "tue": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "wed": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "thu": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "fri": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "13:00"
                     *           }
                     *         ]
                     *       },
                     *       "bookingTimerMinutes": 10,
                     *       "reminderOffsets": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "address": {
                     *         "addressLine1": "120 Main Street",
                     *         "city": "New York",
                     *         "state": "NY",
                     *         "postalCode": "10001",
                     *         "country": "US"
                     *       },
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "services": [],
                     *       "resources": []
                     *     }
                     */
                    "application/json": components["schemas"]["Location"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listLocations: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Comma-separated, any of: services, resources, address, company */
                include?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The location records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Location"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getLocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Lists omit address, company, services and resources unless `include` names them; a single read has them all. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Main Street",
                     *       "timezoneName": "America/New_York",
                     *       "phone": "+12125550123",
                     *       "email": "frontdesk@acme-dental.example",
                     *       "weeklyAvailability": {
                     *         "mon": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "tue": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "wed": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "thu": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "17:00"
                     *           }
                     *         ],
                     *         "fri": [
                     *           {
                     *             "start": "09:00",
                     *             "end": "13:00"
                     *           }
                     *         ]
                     *       },
                     *       "bookingTimerMinutes": 10,
                     *       "reminderOffsets": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "address": {
                     *         "addressLine1": "120 Main Street",
                     *         "city": "New York",
                     *         "state": "NY",
                     *         "postalCode": "10001",
                     *         "country": "US"
                     *       },
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "services": [],
                     *       "resources": []
                     *     }
                     */
                    "application/json": components["schemas"]["Location"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateLocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "phone": "+12125550124",
                 *       "bookingTimerMinutes": 15
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    timezoneName?: string;
                    address?: {
                        addressLine1?: string;
                        addressLine2?: string;
                        city?: string;
                        /** @description The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH) */
                        state?: string;
                        postalCode?: string;
                        /** @description ISO 3166-1 alpha-2 country code, for example GB (stored in capitals) */
                        country: string;
                    } | null;
                    phone?: string | null;
                    email?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Minutes a hold lasts (1 to 30, default 10) */
                    bookingTimerMinutes?: number;
                    reminderOffsets?: number[] | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description Lists omit address, company, services and resources unless `include` names them; a single read has them all. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Location"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    archiveLocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchLocation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "phone": "+12125550124",
                 *       "bookingTimerMinutes": 15
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    timezoneName?: string;
                    address?: {
                        addressLine1?: string;
                        addressLine2?: string;
                        city?: string;
                        /** @description The ISO 3166-2 subdivision code without the country, for example CA (US-CA) or MH (IN-MH) */
                        state?: string;
                        postalCode?: string;
                        /** @description ISO 3166-1 alpha-2 country code, for example GB (stored in capitals) */
                        country: string;
                    } | null;
                    phone?: string | null;
                    email?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Minutes a hold lasts (1 to 30, default 10) */
                    bookingTimerMinutes?: number;
                    reminderOffsets?: number[] | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description Lists omit address, company, services and resources unless `include` names them; a single read has them all. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Location"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createService: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Check-up",
                 *       "description": "A 60-minute dental check-up",
                 *       "duration": 60,
                 *       "locationIds": [
                 *         "365ad694-db66-479f-8df0-4a6155a342ee"
                 *       ],
                 *       "bookAheadUnit": "weeks",
                 *       "bookAheadValue": 8,
                 *       "bookInAdvance": 60,
                 *       "padding": 10,
                 *       "feeAmount": 80,
                 *       "roundRobin": "NONE"
                 *     }
                 */
                "application/json": {
                    name: string;
                    description?: string | null;
                    /** @description Appointment length in minutes */
                    duration: number;
                    /** @description Customers may choose the duration between durationMin and durationMax in steps of durationInterval */
                    durationSelect?: boolean;
                    durationMin?: number | null;
                    durationMax?: number | null;
                    durationInterval?: number | null;
                    /**
                     * @description schedule: weekly schedules; allocation: only allocated windows
                     * @enum {string}
                     */
                    availabilityType?: "schedule" | "allocation";
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /**
                     * @description How far ahead booking is allowed, with bookAheadValue
                     * @enum {string}
                     */
                    bookAheadUnit?: "none" | "days" | "weeks" | "months";
                    bookAheadValue?: number | null;
                    /** @description Minimum lead time in minutes */
                    bookInAdvance?: number;
                    /** @description Active appointments (BK and unexpired IN) per customer; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Lifetime appointments per customer (RE not counted); 0 = unlimited */
                    maxBookingLimit?: number;
                    /** @description Lifetime appointments per customer and resource (RE not counted); 0 = unlimited */
                    maxResourceBookingLimit?: number;
                    /** @description Bookings of the service per day; 0 = unlimited */
                    dailyBookingLimitCount?: number;
                    /** @description Booked minutes of the service per day; 0 = unlimited */
                    dailyBookingLimitMinutes?: number;
                    bookingInterval?: number | null;
                    /** @description Buffer minutes after each appointment */
                    padding?: number;
                    /** @description Concurrent capacity at the same instant */
                    bookingsPerSlot?: number;
                    feeAmount?: number | null;
                    feeTaxable?: boolean;
                    cancellationFeeAmount?: number | null;
                    cancellationFeeTaxable?: boolean;
                    nonRefundable?: boolean;
                    imageUrl?: string | null;
                    /** @description Offered on public booking pages */
                    showOnline?: boolean;
                    /** @enum {string} */
                    roundRobin?: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                    /** @description Default for holds and reservations */
                    allowPaddingOverflow?: boolean;
                    /** @description Default for holds and reservations */
                    ignoreExternalEvents?: boolean;
                    /** @description Locations where the service is offered */
                    locationIds?: string[];
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The created service */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Check-up",
                     *       "description": "A 60-minute dental check-up",
                     *       "duration": 60,
                     *       "durationSelect": false,
                     *       "durationMin": null,
                     *       "durationMax": null,
                     *       "durationInterval": null,
                     *       "availabilityType": "schedule",
                     *       "weeklyAvailability": null,
                     *       "bookAheadUnit": "weeks",
                     *       "bookAheadValue": 8,
                     *       "bookInAdvance": 60,
                     *       "bookingLimit": 0,
                     *       "maxBookingLimit": 0,
                     *       "maxResourceBookingLimit": 0,
                     *       "dailyBookingLimitCount": 0,
                     *       "dailyBookingLimitMinutes": 0,
                     *       "bookingInterval": null,
                     *       "padding": 10,
                     *       "bookingsPerSlot": 1,
                     *       "feeAmount": 80,
                     *       "feeTaxable": false,
                     *       "cancellationFeeAmount": null,
                     *       "cancellationFeeTaxable": false,
                     *       "nonRefundable": false,
                     *       "imageUrl": null,
                     *       "showOnline": true,
                     *       "roundRobin": "NONE",
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "legacyId": null,
                     *       "locationIds": [
                     *         "365ad694-db66-479f-8df0-4a6155a342ee"
                     *       ],
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "locations": [
                     *         {
                     *           "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *           "name": "Main Street"
                     *         }
                     *       ],
                     *       "resources": []
                     *     }
                     */
                    "application/json": components["schemas"]["Service"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listServices: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Comma-separated, any of: locations, resources, company */
                include?: string;
                /** @description Only services offered at this location */
                LocationId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Service"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getService: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Check-up",
                     *       "description": "A 60-minute dental check-up",
                     *       "duration": 60,
                     *       "durationSelect": false,
                     *       "durationMin": null,
                     *       "durationMax": null,
                     *       "durationInterval": null,
                     *       "availabilityType": "schedule",
                     *       "weeklyAvailability": null,
                     *       "bookAheadUnit": "weeks",
                     *       "bookAheadValue": 8,
                     *       "bookInAdvance": 60,
                     *       "bookingLimit": 0,
                     *       "maxBookingLimit": 0,
                     *       "maxResourceBookingLimit": 0,
                     *       "dailyBookingLimitCount": 0,
                     *       "dailyBookingLimitMinutes": 0,
                     *       "bookingInterval": null,
                     *       "padding": 10,
                     *       "bookingsPerSlot": 1,
                     *       "feeAmount": 80,
                     *       "feeTaxable": false,
                     *       "cancellationFeeAmount": null,
                     *       "cancellationFeeTaxable": false,
                     *       "nonRefundable": false,
                     *       "imageUrl": null,
                     *       "showOnline": true,
                     *       "roundRobin": "NONE",
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "legacyId": null,
                     *       "locationIds": [
                     *         "365ad694-db66-479f-8df0-4a6155a342ee"
                     *       ],
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "locations": [
                     *         {
                     *           "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *           "name": "Main Street"
                     *         }
                     *       ],
                     *       "resources": []
                     *     }
                     */
                    "application/json": components["schemas"]["Service"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateService: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "padding": 15,
                 *       "showOnline": true
                 *     }
                 */
                "application/json": {
                    name?: string;
                    description?: string | null;
                    /** @description Appointment length in minutes */
                    duration?: number;
                    /** @description Customers may choose the duration between durationMin and durationMax in steps of durationInterval */
                    durationSelect?: boolean;
                    durationMin?: number | null;
                    durationMax?: number | null;
                    durationInterval?: number | null;
                    /**
                     * @description schedule: weekly schedules; allocation: only allocated windows
                     * @enum {string}
                     */
                    availabilityType?: "schedule" | "allocation";
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /**
                     * @description How far ahead booking is allowed, with bookAheadValue
                     * @enum {string}
                     */
                    bookAheadUnit?: "none" | "days" | "weeks" | "months";
                    bookAheadValue?: number | null;
                    /** @description Minimum lead time in minutes */
                    bookInAdvance?: number;
                    /** @description Active appointments (BK and unexpired IN) per customer; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Lifetime appointments per customer (RE not counted); 0 = unlimited */
                    maxBookingLimit?: number;
                    /** @description Lifetime appointments per customer and resource (RE not counted); 0 = unlimited */
                    maxResourceBookingLimit?: number;
                    /** @description Bookings of the service per day; 0 = unlimited */
                    dailyBookingLimitCount?: number;
                    /** @description Booked minutes of the service per day; 0 = unlimited */
                    dailyBookingLimitMinutes?: number;
                    bookingInterval?: number | null;
                    /** @description Buffer minutes after each appointment */
                    padding?: number;
                    /** @description Concurrent capacity at the same instant */
                    bookingsPerSlot?: number;
                    feeAmount?: number | null;
                    feeTaxable?: boolean;
                    cancellationFeeAmount?: number | null;
                    cancellationFeeTaxable?: boolean;
                    nonRefundable?: boolean;
                    imageUrl?: string | null;
                    /** @description Offered on public booking pages */
                    showOnline?: boolean;
                    /** @enum {string} */
                    roundRobin?: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                    /** @description Default for holds and reservations */
                    allowPaddingOverflow?: boolean;
                    /** @description Default for holds and reservations */
                    ignoreExternalEvents?: boolean;
                    /** @description Locations where the service is offered */
                    locationIds?: string[];
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The service */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Service"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    archiveService: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchService: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "padding": 15,
                 *       "showOnline": true
                 *     }
                 */
                "application/json": {
                    name?: string;
                    description?: string | null;
                    /** @description Appointment length in minutes */
                    duration?: number;
                    /** @description Customers may choose the duration between durationMin and durationMax in steps of durationInterval */
                    durationSelect?: boolean;
                    durationMin?: number | null;
                    durationMax?: number | null;
                    durationInterval?: number | null;
                    /**
                     * @description schedule: weekly schedules; allocation: only allocated windows
                     * @enum {string}
                     */
                    availabilityType?: "schedule" | "allocation";
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /**
                     * @description How far ahead booking is allowed, with bookAheadValue
                     * @enum {string}
                     */
                    bookAheadUnit?: "none" | "days" | "weeks" | "months";
                    bookAheadValue?: number | null;
                    /** @description Minimum lead time in minutes */
                    bookInAdvance?: number;
                    /** @description Active appointments (BK and unexpired IN) per customer; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Lifetime appointments per customer (RE not counted); 0 = unlimited */
                    maxBookingLimit?: number;
                    /** @description Lifetime appointments per customer and resource (RE not counted); 0 = unlimited */
                    maxResourceBookingLimit?: number;
                    /** @description Bookings of the service per day; 0 = unlimited */
                    dailyBookingLimitCount?: number;
                    /** @description Booked minutes of the service per day; 0 = unlimited */
                    dailyBookingLimitMinutes?: number;
                    bookingInterval?: number | null;
                    /** @description Buffer minutes after each appointment */
                    padding?: number;
                    /** @description Concurrent capacity at the same instant */
                    bookingsPerSlot?: number;
                    feeAmount?: number | null;
                    feeTaxable?: boolean;
                    cancellationFeeAmount?: number | null;
                    cancellationFeeTaxable?: boolean;
                    nonRefundable?: boolean;
                    imageUrl?: string | null;
                    /** @description Offered on public booking pages */
                    showOnline?: boolean;
                    /** @enum {string} */
                    roundRobin?: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                    /** @description Default for holds and reservations */
                    allowPaddingOverflow?: boolean;
                    /** @description Default for holds and reservations */
                    ignoreExternalEvents?: boolean;
                    /** @description Locations where the service is offered */
                    locationIds?: string[];
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The service */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Service"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createResource: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Dr. Ann Lee",
                 *       "email": "ann.lee@acme-dental.example",
                 *       "locationIds": [
                 *         "365ad694-db66-479f-8df0-4a6155a342ee"
                 *       ],
                 *       "serviceIds": [
                 *         "92d7b44e-876a-430d-b7de-b6c36ad1e455"
                 *       ]
                 *     }
                 */
                "application/json": {
                    name: string;
                    email?: string | null;
                    phone?: string | null;
                    timezoneName?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Active appointments per customer with this resource for the current service; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Locations the resource works at */
                    locationIds?: string[];
                    /** @description Services the resource provides */
                    serviceIds?: string[];
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The created resource */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "b3914113-bd80-436d-b9a3-098d4e246c3d",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Dr. Ann Lee",
                     *       "email": "ann.lee@acme-dental.example",
                     *       "phone": null,
                     *       "timezoneName": null,
                     *       "weeklyAvailability": null,
                     *       "bookingLimit": 0,
                     *       "legacyId": null,
                     *       "locationIds": [
                     *         "365ad694-db66-479f-8df0-4a6155a342ee"
                     *       ],
                     *       "serviceIds": [
                     *         "92d7b44e-876a-430d-b7de-b6c36ad1e455"
                     *       ],
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "locations": [
                     *         {
                     *           "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *           "name": "Main Street"
                     *         }
                     *       ],
                     *       "services": [
                     *         {
                     *           "id": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *           "name": "Check-up"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Resource"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listResources: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Comma-separated, any of: locations, services, company */
                include?: string;
                /** @description Only resources working at this location */
                LocationId?: string;
                /** @description Only resources providing this service */
                ServiceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The resource records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Resource"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The resource */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "b3914113-bd80-436d-b9a3-098d4e246c3d",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "name": "Dr. Ann Lee",
                     *       "email": "ann.lee@acme-dental.example",
                     *       "phone": null,
                     *       "timezoneName": null,
                     *       "weeklyAvailability": null,
                     *       "bookingLimit": 0,
                     *       "legacyId": null,
                     *       "locationIds": [
                     *         "365ad694-db66-479f-8df0-4a6155a342ee"
                     *       ],
                     *       "serviceIds": [
                     *         "92d7b44e-876a-430d-b7de-b6c36ad1e455"
                     *       ],
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z",
                     *       "company": {
                     *         "id": "142c6874-b5a2-456e-9407-1489540116b7",
                     *         "name": "Acme Dental"
                     *       },
                     *       "locations": [
                     *         {
                     *           "id": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *           "name": "Main Street"
                     *         }
                     *       ],
                     *       "services": [
                     *         {
                     *           "id": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *           "name": "Check-up"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Resource"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "weeklyAvailability": {
                 *         "tue": [
                 *           {
                 *             "start": "10:00",
                 *             "end": "18:00"
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": {
                    name?: string;
                    email?: string | null;
                    phone?: string | null;
                    timezoneName?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Active appointments per customer with this resource for the current service; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Locations the resource works at */
                    locationIds?: string[];
                    /** @description Services the resource provides */
                    serviceIds?: string[];
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The resource */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Resource"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    archiveResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "weeklyAvailability": {
                 *         "tue": [
                 *           {
                 *             "start": "10:00",
                 *             "end": "18:00"
                 *           }
                 *         ]
                 *       }
                 *     }
                 */
                "application/json": {
                    name?: string;
                    email?: string | null;
                    phone?: string | null;
                    timezoneName?: string | null;
                    weeklyAvailability?: {
                        mon?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        tue?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        wed?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        thu?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        fri?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sat?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                        sun?: {
                            /** @description HH:MM */
                            start: string;
                            /** @description HH:MM; 24:00 ends at midnight */
                            end: string;
                        }[];
                    } | null;
                    /** @description Active appointments per customer with this resource for the current service; 0 = unlimited */
                    bookingLimit?: number;
                    /** @description Locations the resource works at */
                    locationIds?: string[];
                    /** @description Services the resource provides */
                    serviceIds?: string[];
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The resource */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Resource"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createCustomer: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "firstName": "Cara",
                 *       "lastName": "Jones",
                 *       "email": "cara.jones@example.com",
                 *       "phone": "2125550188",
                 *       "field1": "prefers mornings"
                 *     }
                 */
                "application/json": {
                    firstName: string;
                    lastName?: string | null;
                    /** Format: email */
                    email: string;
                    phone?: string | null;
                    notes?: string | null;
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The created customer */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "firstName": "Cara",
                     *       "lastName": "Jones",
                     *       "email": "cara.jones@example.com",
                     *       "phone": "2125550188",
                     *       "notes": null,
                     *       "legacyId": null,
                     *       "field1": "prefers mornings",
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Customer"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listCustomers: {
        parameters: {
            query?: {
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Exact email, ignoring case */
                email?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The customer records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Customer"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getCustomer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The customer */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "firstName": "Cara",
                     *       "lastName": "Jones",
                     *       "email": "cara.jones@example.com",
                     *       "phone": "2125550188",
                     *       "notes": null,
                     *       "legacyId": null,
                     *       "field1": "prefers mornings",
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Customer"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateCustomer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "phone": "2125550199"
                 *     }
                 */
                "application/json": {
                    firstName?: string;
                    lastName?: string | null;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                    notes?: string | null;
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The customer */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Customer"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    archiveCustomer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchCustomer: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "phone": "2125550199"
                 *     }
                 */
                "application/json": {
                    firstName?: string;
                    lastName?: string | null;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                    notes?: string | null;
                    legacyId?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The customer */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Customer"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUsers: {
        parameters: {
            query?: {
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The dashboard user records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["DashboardUser"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "users": [
                 *         {
                 *           "email": "frontdesk@acme-dental.example",
                 *           "role": "User",
                 *           "locationAccessMode": "LOCATIONS",
                 *           "allowedLocationIds": [
                 *             "365ad694-db66-479f-8df0-4a6155a342ee"
                 *           ]
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    users: {
                        /** Format: email */
                        email: string;
                        /** @enum {string} */
                        role?: "Owner" | "Admin" | "User" | "Resource";
                        /**
                         * @description COMPANY: every location; LOCATIONS: only allowedLocationIds
                         * @enum {string}
                         */
                        locationAccessMode?: "COMPANY" | "LOCATIONS";
                        /** @description Locations the user may see and change, with LOCATIONS */
                        allowedLocationIds?: string[];
                        /** @description Required when the role is Resource */
                        linkedResourceId?: string | null;
                    }[];
                };
            };
        };
        responses: {
            /** @description The dashboard user records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["DashboardUser"][];
                        invitations: {
                            /** Format: uuid */
                            id: string;
                            email: string;
                            /** @enum {string} */
                            role: "Owner" | "Admin" | "User" | "Resource";
                            locationAccessMode: string;
                            allowedLocationIds: string[];
                            linkedResourceId: string | null;
                            /** Format: date-time */
                            expiresAt: string;
                            /** @description false: the mail could not be sent (or SMTP is not configured); call setUsers again to resend */
                            emailSent: boolean;
                        }[];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    adjustUsers: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "users": [
                 *         {
                 *           "id": "7d2e4f6a-8b0c-4d1e-9f2a-3b4c5d6e7f80",
                 *           "role": "Admin",
                 *           "locationAccessMode": "COMPANY"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    users: {
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        role?: "Owner" | "Admin" | "User" | "Resource";
                        /**
                         * @description COMPANY: every location; LOCATIONS: only allowedLocationIds
                         * @enum {string}
                         */
                        locationAccessMode?: "COMPANY" | "LOCATIONS";
                        /** @description Locations the user may see and change, with LOCATIONS */
                        allowedLocationIds?: string[];
                        /** @description Required when the role is Resource */
                        linkedResourceId?: string | null;
                    }[];
                };
            };
        };
        responses: {
            /** @description The dashboard user records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["DashboardUser"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    acceptInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "token": "inv_4mJ0xv2Qk8b1s9QeZr7Tq3LwYc5Nd6Hp",
                 *       "password": "a long, unusual passphrase",
                 *       "name": "Front Desk"
                 *     }
                 */
                "application/json": {
                    token: string;
                    /** @description 8 to 256 characters, not one of the most common passwords */
                    password?: string;
                    name?: string;
                };
            };
        };
        responses: {
            /** @description Success: Accept an invitation with the token mailed to the invited address */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        companyId: string;
                        companyName: string;
                        /**
                         * Format: uuid
                         * @description User id
                         */
                        id: string;
                        email: string;
                        name: string;
                        /** @enum {string} */
                        role: "Owner" | "Admin" | "User" | "Resource";
                        locationAccessMode: string;
                        allowedLocationIds: string[];
                        linkedResourceId: string | null;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listBlocks: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Only rows scoped to this location */
                LocationId?: string;
                /** @description Only rows scoped to this resource */
                ResourceId?: string;
                /** @description Only rows scoped to this service (several filters: rows matching any) */
                ServiceId?: string;
                /** @description Blocks ending after the start of this day (in the LocationId filter's time zone, else UTC) */
                startDate?: string;
                /** @description Blocks starting before the end of this day */
                endDate?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The unavailability block records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["UnavailabilityBlock"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createBlock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Legacy codes in `x-codes` are those of a location scope (CALENDARBLOCK); with a ResourceId or ServiceId the errors carry the RESOURCEBLOCK or SERVICEBLOCK code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "ResourceId": "b3914113-bd80-436d-b9a3-098d4e246c3d",
                 *       "startTime": "2026-12-24T12:00:00-05:00",
                 *       "endTime": "2026-12-24T17:00:00-05:00",
                 *       "reason": "Staff party"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: uuid
                     * @description Block a whole location (exactly one of LocationId, ResourceId, ServiceId)
                     */
                    LocationId?: string;
                    /**
                     * Format: uuid
                     * @description Block one resource
                     */
                    ResourceId?: string;
                    /**
                     * Format: uuid
                     * @description Block one service
                     */
                    ServiceId?: string;
                    /**
                     * Format: date-time
                     * @description ISO 8601 with an offset
                     */
                    startTime: string;
                    /**
                     * Format: date-time
                     * @description ISO 8601 with an offset; after startTime
                     */
                    endTime: string;
                    /** @description 2 to 50 characters */
                    reason: string;
                };
            };
        };
        responses: {
            /** @description A one-off block of a location, a resource or a service */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnavailabilityBlock"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRecurringBlocks: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Only rows scoped to this location */
                LocationId?: string;
                /** @description Only rows scoped to this resource */
                ResourceId?: string;
                /** @description Only rows scoped to this service (several filters: rows matching any) */
                ServiceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The recurring block records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["RecurringBlock"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createRecurringBlock: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Legacy codes in `x-codes` are those of a location scope (CALENDARBLOCK); with a ResourceId or ServiceId the errors carry the RESOURCEBLOCK or SERVICEBLOCK code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "LocationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                 *       "name": "Team meeting",
                 *       "frequency": "WEEKLY",
                 *       "interval": 2,
                 *       "startDate": "2027-01-04",
                 *       "endDate": "2027-06-28",
                 *       "startTime": "09:30",
                 *       "endTime": "10:15",
                 *       "iana": "America/New_York",
                 *       "weekdays": [
                 *         1,
                 *         5
                 *       ]
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** @enum {string} */
                    frequency: "DAILY" | "WEEKLY" | "BIWEEKLY" | "MONTHLY" | "YEARLY";
                    /** @description Every `interval` days, weeks, months or years (BIWEEKLY: every 2 × interval weeks). 1-365 DAILY (REPEAT-102), 1-52 WEEKLY and BIWEEKLY (REPEAT-103), 1-12 MONTHLY (REPEAT-104), 1-5 YEARLY (REPEAT-105). Default 1. */
                    interval?: number;
                    /**
                     * Format: date
                     * @description YYYY-MM-DD, first day of the rule
                     */
                    startDate: string;
                    endDate?: string | null;
                    /** @description HH:MM (00:00 to 23:59) */
                    startTime: string;
                    /** @description HH:MM; "24:00" is midnight at the end of the day; an endTime before startTime ends on the next day (overnight); equal to startTime is refused */
                    endTime: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    iana: string;
                    /** @description 0 = Sunday … 6 = Saturday. Required (non-empty) for WEEKLY and BIWEEKLY (REPEAT-106); not allowed otherwise */
                    weekdays?: number[];
                    dayOfMonth?: number | null;
                    legacyId?: string | null;
                    /**
                     * Format: uuid
                     * @description Block a whole location (exactly one of LocationId, ResourceId, ServiceId)
                     */
                    LocationId?: string;
                    /**
                     * Format: uuid
                     * @description Block one resource
                     */
                    ResourceId?: string;
                    /**
                     * Format: uuid
                     * @description Block one service
                     */
                    ServiceId?: string;
                };
            };
        };
        responses: {
            /** @description A structured recurrence of wall-clock times in `iana` */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecurringBlock"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getRecurringBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A structured recurrence of wall-clock times in `iana` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecurringBlock"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateRecurringBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description Fields given change; the merged rule must be valid. A scope id given moves the rule to that scope. Legacy codes in `x-codes` are those of a location scope (CALENDARBLOCK); with a ResourceId or ServiceId the errors carry the RESOURCEBLOCK or SERVICEBLOCK code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "frequency": "MONTHLY",
                 *       "dayOfMonth": 15,
                 *       "interval": 1
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /** @enum {string} */
                    frequency?: "DAILY" | "WEEKLY" | "BIWEEKLY" | "MONTHLY" | "YEARLY";
                    /** @description Every `interval` days, weeks, months or years (BIWEEKLY: every 2 × interval weeks). 1-365 DAILY (REPEAT-102), 1-52 WEEKLY and BIWEEKLY (REPEAT-103), 1-12 MONTHLY (REPEAT-104), 1-5 YEARLY (REPEAT-105). Default 1. */
                    interval?: number;
                    /**
                     * Format: date
                     * @description YYYY-MM-DD, first day of the rule
                     */
                    startDate?: string;
                    endDate?: string | null;
                    /** @description HH:MM (00:00 to 23:59) */
                    startTime?: string;
                    /** @description HH:MM; "24:00" is midnight at the end of the day; an endTime before startTime ends on the next day (overnight); equal to startTime is refused */
                    endTime?: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    iana?: string;
                    /** @description 0 = Sunday … 6 = Saturday. Required (non-empty) for WEEKLY and BIWEEKLY (REPEAT-106); not allowed otherwise */
                    weekdays?: number[];
                    dayOfMonth?: number | null;
                    legacyId?: string | null;
                    /**
                     * Format: uuid
                     * @description Block a whole location (exactly one of LocationId, ResourceId, ServiceId)
                     */
                    LocationId?: string;
                    /**
                     * Format: uuid
                     * @description Block one resource
                     */
                    ResourceId?: string;
                    /**
                     * Format: uuid
                     * @description Block one service
                     */
                    ServiceId?: string;
                };
            };
        };
        responses: {
            /** @description A structured recurrence of wall-clock times in `iana` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecurringBlock"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteRecurringBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchRecurringBlock: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        /** @description Fields given change; the merged rule must be valid. A scope id given moves the rule to that scope. Legacy codes in `x-codes` are those of a location scope (CALENDARBLOCK); with a ResourceId or ServiceId the errors carry the RESOURCEBLOCK or SERVICEBLOCK code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "frequency": "MONTHLY",
                 *       "dayOfMonth": 15,
                 *       "interval": 1
                 *     }
                 */
                "application/json": {
                    name?: string;
                    /** @enum {string} */
                    frequency?: "DAILY" | "WEEKLY" | "BIWEEKLY" | "MONTHLY" | "YEARLY";
                    /** @description Every `interval` days, weeks, months or years (BIWEEKLY: every 2 × interval weeks). 1-365 DAILY (REPEAT-102), 1-52 WEEKLY and BIWEEKLY (REPEAT-103), 1-12 MONTHLY (REPEAT-104), 1-5 YEARLY (REPEAT-105). Default 1. */
                    interval?: number;
                    /**
                     * Format: date
                     * @description YYYY-MM-DD, first day of the rule
                     */
                    startDate?: string;
                    endDate?: string | null;
                    /** @description HH:MM (00:00 to 23:59) */
                    startTime?: string;
                    /** @description HH:MM; "24:00" is midnight at the end of the day; an endTime before startTime ends on the next day (overnight); equal to startTime is refused */
                    endTime?: string;
                    /**
                     * Format: iana-timezone
                     * @description IANA time zone name, for example Europe/London
                     */
                    iana?: string;
                    /** @description 0 = Sunday … 6 = Saturday. Required (non-empty) for WEEKLY and BIWEEKLY (REPEAT-106); not allowed otherwise */
                    weekdays?: number[];
                    dayOfMonth?: number | null;
                    legacyId?: string | null;
                    /**
                     * Format: uuid
                     * @description Block a whole location (exactly one of LocationId, ResourceId, ServiceId)
                     */
                    LocationId?: string;
                    /**
                     * Format: uuid
                     * @description Block one resource
                     */
                    ResourceId?: string;
                    /**
                     * Format: uuid
                     * @description Block one service
                     */
                    ServiceId?: string;
                };
            };
        };
        responses: {
            /** @description A structured recurrence of wall-clock times in `iana` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecurringBlock"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listHolidays: {
        parameters: {
            query?: {
                /** @description Page size, at most 500 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
                /** @description Only this location's holidays */
                LocationId?: string;
                /** @description Holidays on or after this date */
                startDate?: string;
                /** @description Holidays on or before this date */
                endDate?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The holiday records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Holiday"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createHoliday: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "LocationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                 *       "date": "2026-12-25",
                 *       "name": "Christmas Day"
                 *     }
                 */
                "application/json": {
                    /**
                     * Format: uuid
                     * @description The location that is closed
                     */
                    LocationId: string;
                    /**
                     * Format: date
                     * @description YYYY-MM-DD, in the location's time zone
                     */
                    date: string;
                    name: string;
                };
            };
        };
        responses: {
            /** @description A whole day on which a location is closed */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Holiday"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteHoliday: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWeeklyAllocations: {
        parameters: {
            query: {
                /** @description Required */
                LocationId: string;
                /** @description Optional; absent means allocations without a service */
                ServiceId?: string;
                /** @description Optional; absent means allocations without a resource */
                ResourceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The weekly allocation records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["WeeklyAllocation"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setWeeklyAllocations: {
        parameters: {
            query: {
                /** @description Required */
                LocationId: string;
                /** @description Optional; absent means allocations without a service */
                ServiceId?: string;
                /** @description Optional; absent means allocations without a resource */
                ResourceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Legacy codes in `x-codes` are SERVICEALLOCATION codes; when ResourceId is given the errors carry the RESOURCEALLOCATION code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allocations": [
                 *         {
                 *           "day": "mon",
                 *           "start": "09:00",
                 *           "end": "12:00",
                 *           "bookingsPerSlot": 2,
                 *           "legacyId": "4711"
                 *         },
                 *         {
                 *           "day": "wed",
                 *           "start": "13:00",
                 *           "end": "17:00"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description The whole new set; [] clears it */
                    allocations: {
                        /** @enum {string} */
                        day: "mon" | "tue" | "wed" | "thu" | "fri" | "sat" | "sun";
                        /** @description HH:MM (00:00 to 23:59) */
                        start: string;
                        /** @description HH:MM, after start; "24:00" is midnight */
                        end: string;
                        bookingsPerSlot?: number | null;
                        legacyId?: string | null;
                    }[];
                };
            };
        };
        responses: {
            /** @description The weekly allocation records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["WeeklyAllocation"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSingleAllocations: {
        parameters: {
            query: {
                /** @description Required */
                LocationId: string;
                /** @description Optional; absent means allocations without a service */
                ServiceId?: string;
                /** @description Optional; absent means allocations without a resource */
                ResourceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The single allocation records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["SingleAllocation"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setSingleAllocations: {
        parameters: {
            query: {
                /** @description Required */
                LocationId: string;
                /** @description Optional; absent means allocations without a service */
                ServiceId?: string;
                /** @description Optional; absent means allocations without a resource */
                ResourceId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Legacy codes in `x-codes` are SERVICEALLOCATION codes; when ResourceId is given the errors carry the RESOURCEALLOCATION code of the same rule. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allocations": [
                 *         {
                 *           "date": "2027-06-01",
                 *           "start": "09:00",
                 *           "end": "12:00",
                 *           "legacyId": "812"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description The whole new set; [] clears it */
                    allocations: {
                        /**
                         * Format: date
                         * @description YYYY-MM-DD
                         */
                        date: string;
                        /** @description HH:MM (00:00 to 23:59) */
                        start: string;
                        /** @description HH:MM, after start; "24:00" is midnight */
                        end: string;
                        bookingsPerSlot?: number | null;
                        legacyId?: string | null;
                    }[];
                };
            };
        };
        responses: {
            /** @description The single allocation records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["SingleAllocation"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUnavailability: {
        parameters: {
            query: {
                /** @description Comma-separated, or repeated */
                LocationIds?: string[];
                /** @description Comma-separated, or repeated */
                ResourceIds?: string[];
                ServiceId?: string;
                startDate: string;
                endDate?: string;
                /** @description Removed: sending it is a 400 */
                roundRobin?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The unavailability row records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["UnavailabilityRow"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUnavailabilityCalendar: {
        parameters: {
            query: {
                /** @description Comma-separated, or repeated */
                LocationIds?: string[];
                /** @description Comma-separated, or repeated */
                ResourceIds?: string[];
                ServiceId?: string;
                startDate: string;
                endDate?: string;
                /** @description Removed: sending it is a 400 */
                roundRobin?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The unavailability row records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["UnavailabilityRow"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchPublicAvailability: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
                /** @description YYYY-MM-DD, a local date of the location */
                startDate: string;
                /** @description Default: startDate. At most 31 days after it. */
                endDate?: string;
                /** @description Minutes; one of the service's duration options */
                duration?: number;
                /** @description Comma-separated, or repeated */
                ResourceIds?: string[];
                /** @description Default: the service's */
                roundRobin?: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                /** @description IANA zone in which startDate and endDate are read and availableDays are reported (default: the location's); slots stay UTC instants */
                timezone?: string;
                /** @description Default full. compact: the answer lists each resource id once, in `resources`, and each slot gives `resourceIndexes` into it instead of `resourceIds` */
                format?: "full" | "compact";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The availability. With `format=compact`: `resources` (each resource id once, in id order) is added, and each of `availableTimes` has `resourceIndexes` (positions in `resources`) instead of `resourceIds` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Availability"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchAvailability: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
                /** @description YYYY-MM-DD, a local date of the location */
                startDate: string;
                /** @description Default: startDate. At most 31 days after it. */
                endDate?: string;
                /** @description Minutes; one of the service's duration options */
                duration?: number;
                /** @description Comma-separated, or repeated */
                ResourceIds?: string[];
                /** @description Applies the per-customer limits */
                CustomerId?: string;
                /** @description Default: the service's */
                roundRobin?: "NONE" | "RANDOM" | "BALANCED" | "COMBINED";
                /** @description IANA zone in which startDate and endDate are read and availableDays are reported (default: the location's); slots stay UTC instants */
                timezone?: string;
                /** @description Default full. compact: the answer lists each resource id once, in `resources`, and each slot gives `resourceIndexes` into it instead of `resourceIds` */
                format?: "full" | "compact";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The availability. With `format=compact`: `resources` (each resource id once, in id order) is added, and each of `availableTimes` has `resourceIndexes` (positions in `resources`) instead of `resourceIds` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "timezoneName": "America/New_York",
                     *       "availableTimes": [
                     *         {
                     *           "startTime": "2026-12-07T14:00:00.000Z",
                     *           "endTime": "2026-12-07T15:00:00.000Z",
                     *           "resourceIds": [
                     *             "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *           ],
                     *           "remaining": 1
                     *         },
                     *         {
                     *           "startTime": "2026-12-07T15:10:00.000Z",
                     *           "endTime": "2026-12-07T16:10:00.000Z",
                     *           "resourceIds": [
                     *             "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *           ],
                     *           "remaining": 1
                     *         }
                     *       ],
                     *       "availableDays": [
                     *         {
                     *           "date": "2026-12-07",
                     *           "available": true,
                     *           "reason": null
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["Availability"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createAppointment: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
                /** @description The customer, as in the body (either place; both and different is a 400) */
                CustomerId?: string;
            };
            header?: {
                /** @description A retried POST with the same key returns the first answer instead of booking twice (kept 24 hours) */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Unavailability": {
                 *         "startTime": "2026-12-07T10:00:00-05:00",
                 *         "endTime": "2026-12-07T11:00:00-05:00"
                 *       },
                 *       "ResourceIds": [
                 *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                 *       ],
                 *       "CustomerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                 *       "duration": 60,
                 *       "notes": "first visit"
                 *     }
                 */
                "application/json": {
                    Unavailability: {
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        startTime: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        endTime: string;
                    };
                    /** @description Minutes; must equal endTime - startTime */
                    duration?: number;
                    /** @description Accepted for v1 compatibility: a duration other than the service's is allowed whenever the service permits it (durationSelect) */
                    overrideDuration?: boolean;
                    /** @description Required when the service's roundRobin is NONE; with RANDOM or BALANCED the pool to pick from */
                    ResourceIds?: string[];
                    /** @description Default: the service's */
                    allowPaddingOverflow?: boolean;
                    /** @description Default: the service's */
                    ignoreExternalEvents?: boolean;
                    notes?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                    /** Format: uuid */
                    CustomerId?: string;
                    /** @description Customer name, when CustomerId is not given */
                    name?: string;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The created appointment */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b7c2a4e-1f3d-4c5b-8a9e-6d7f8e9a0b1c",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "locationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "serviceId": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "customerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "resourceIds": [
                     *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *       ],
                     *       "status": "BK",
                     *       "startTime": "2026-12-07T15:00:00.000Z",
                     *       "endTime": "2026-12-07T16:00:00.000Z",
                     *       "duration": 60,
                     *       "padding": 10,
                     *       "timezoneName": "America/New_York",
                     *       "expiresAt": null,
                     *       "confirmed": false,
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "notes": "first visit",
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "rescheduledFromId": null,
                     *       "rescheduledToId": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    holdAppointment: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
                /** @description The customer, as in the body (either place; both and different is a 400) */
                CustomerId?: string;
            };
            header?: {
                /** @description A retried POST with the same key returns the first answer instead of booking twice (kept 24 hours) */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Unavailability": {
                 *         "startTime": "2026-12-07T10:00:00-05:00",
                 *         "endTime": "2026-12-07T11:00:00-05:00"
                 *       },
                 *       "ResourceIds": [
                 *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                 *       ]
                 *     }
                 */
                "application/json": {
                    Unavailability: {
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        startTime: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        endTime: string;
                    };
                    /** @description Minutes; must equal endTime - startTime */
                    duration?: number;
                    /** @description Accepted for v1 compatibility: a duration other than the service's is allowed whenever the service permits it (durationSelect) */
                    overrideDuration?: boolean;
                    /** @description Required when the service's roundRobin is NONE; with RANDOM or BALANCED the pool to pick from */
                    ResourceIds?: string[];
                    /** @description Default: the service's */
                    allowPaddingOverflow?: boolean;
                    /** @description Default: the service's */
                    ignoreExternalEvents?: boolean;
                    notes?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                    /** Format: uuid */
                    CustomerId?: string;
                    /** @description Customer name, when CustomerId is not given */
                    name?: string;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The created appointment */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b7c2a4e-1f3d-4c5b-8a9e-6d7f8e9a0b1c",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "locationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "serviceId": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "customerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "resourceIds": [
                     *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *       ],
                     *       "status": "IN",
                     *       "startTime": "2026-12-07T15:00:00.000Z",
                     *       "endTime": "2026-12-07T16:00:00.000Z",
                     *       "duration": 60,
                     *       "padding": 10,
                     *       "timezoneName": "America/New_York",
                     *       "expiresAt": "2026-12-01T12:10:00.000Z",
                     *       "confirmed": false,
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "notes": "first visit",
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "rescheduledFromId": null,
                     *       "rescheduledToId": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b7c2a4e-1f3d-4c5b-8a9e-6d7f8e9a0b1c",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "locationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "serviceId": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "customerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "resourceIds": [
                     *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *       ],
                     *       "status": "BK",
                     *       "startTime": "2026-12-07T15:00:00.000Z",
                     *       "endTime": "2026-12-07T16:00:00.000Z",
                     *       "duration": 60,
                     *       "padding": 10,
                     *       "timezoneName": "America/New_York",
                     *       "expiresAt": null,
                     *       "confirmed": false,
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "notes": "first visit",
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "rescheduledFromId": null,
                     *       "rescheduledToId": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "notes": "bring x-rays",
                 *       "field2": "insurance checked"
                 *     }
                 */
                "application/json": {
                    notes?: string | null;
                    /** Format: uuid */
                    CustomerId?: string;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteHold: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "notes": "bring x-rays",
                 *       "field2": "insurance checked"
                 *     }
                 */
                "application/json": {
                    notes?: string | null;
                    /** Format: uuid */
                    CustomerId?: string;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    reserveAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "allowPaddingOverflow": false
                 *     }
                 */
                "application/json": {
                    allowPaddingOverflow?: boolean;
                    ignoreExternalEvents?: boolean;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    bookAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Cara Jones",
                 *       "email": "cara.jones@example.com",
                 *       "phone": "2125550188"
                 *     }
                 */
                "application/json": {
                    /** Format: uuid */
                    CustomerId?: string;
                    /** @description Customer name, when CustomerId is not given */
                    name?: string;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "id": "0b7c2a4e-1f3d-4c5b-8a9e-6d7f8e9a0b1c",
                     *       "companyId": "142c6874-b5a2-456e-9407-1489540116b7",
                     *       "locationId": "365ad694-db66-479f-8df0-4a6155a342ee",
                     *       "serviceId": "92d7b44e-876a-430d-b7de-b6c36ad1e455",
                     *       "customerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a",
                     *       "resourceIds": [
                     *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                     *       ],
                     *       "status": "BK",
                     *       "startTime": "2026-12-07T15:00:00.000Z",
                     *       "endTime": "2026-12-07T16:00:00.000Z",
                     *       "duration": 60,
                     *       "padding": 10,
                     *       "timezoneName": "America/New_York",
                     *       "expiresAt": null,
                     *       "confirmed": false,
                     *       "allowPaddingOverflow": false,
                     *       "ignoreExternalEvents": false,
                     *       "notes": "first visit",
                     *       "field1": null,
                     *       "field2": null,
                     *       "field3": null,
                     *       "field4": null,
                     *       "field5": null,
                     *       "field6": null,
                     *       "field7": null,
                     *       "field8": null,
                     *       "field9": null,
                     *       "field10": null,
                     *       "rescheduledFromId": null,
                     *       "rescheduledToId": null,
                     *       "legacyId": null,
                     *       "createdAt": "2026-11-22T15:43:35.275Z",
                     *       "updatedAt": "2026-11-22T15:43:35.275Z"
                     *     }
                     */
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    confirmAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rescheduleAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Unavailability": {
                 *         "startTime": "2026-12-08T14:00:00-05:00",
                 *         "endTime": "2026-12-08T15:00:00-05:00"
                 *       },
                 *       "CustomerId": "5f0c3c36-8d2c-4b0b-9a51-3f3f0d3b1e8a"
                 *     }
                 */
                "application/json": {
                    Unavailability?: {
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        startTime: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        endTime: string;
                    };
                    /** @description Minutes; must equal endTime - startTime */
                    duration?: number;
                    /** @description Accepted for v1 compatibility: a duration other than the service's is allowed whenever the service permits it (durationSelect) */
                    overrideDuration?: boolean;
                    /** @description Required when the service's roundRobin is NONE; with RANDOM or BALANCED the pool to pick from */
                    ResourceIds?: string[];
                    /** @description Default: the service's */
                    allowPaddingOverflow?: boolean;
                    /** @description Default: the service's */
                    ignoreExternalEvents?: boolean;
                    notes?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                    /** Format: uuid */
                    CustomerId?: string;
                    /** @description Customer name, when CustomerId is not given */
                    name?: string;
                    /** Format: email */
                    email?: string;
                    phone?: string | null;
                    legacyId?: string | null;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAppointments: {
        parameters: {
            query?: {
                LocationId?: string;
                ServiceId?: string;
                ResourceId?: string;
                CustomerId?: string;
                /** @description One or more statuses, comma-separated or repeated */
                status?: string[];
                /** @description Appointments starting on or after this date (the location's zone with LocationId, else UTC) */
                startDate?: string;
                /** @description Appointments starting on or before this date */
                endDate?: string;
                sort?: "startTime" | "createdAt";
                order?: "asc" | "desc";
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The appointment records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Appointment"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAppointmentsByCursor: {
        parameters: {
            query?: {
                LocationId?: string;
                ServiceId?: string;
                ResourceId?: string;
                CustomerId?: string;
                /** @description One or more statuses, comma-separated or repeated */
                status?: string[];
                /** @description Appointments starting on or after this date (the location's zone with LocationId, else UTC) */
                startDate?: string;
                /** @description Appointments starting on or before this date */
                endDate?: string;
                sort?: "startTime" | "createdAt";
                order?: "asc" | "desc";
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description From nextCursor; a continuation sends nothing else */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The appointment records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Appointment"][];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    holdPublicAppointment: {
        parameters: {
            query: {
                LocationId: string;
                ServiceId: string;
            };
            header?: {
                /** @description A retried POST with the same key returns the first answer instead of booking twice (kept 24 hours) */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Unavailability": {
                 *         "startTime": "2026-12-07T10:00:00-05:00",
                 *         "endTime": "2026-12-07T11:00:00-05:00"
                 *       },
                 *       "ResourceIds": [
                 *         "b3914113-bd80-436d-b9a3-098d4e246c3d"
                 *       ]
                 *     }
                 */
                "application/json": {
                    Unavailability: {
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        startTime: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        endTime: string;
                    };
                    /** @description Minutes; must equal endTime - startTime */
                    duration?: number;
                    /** @description Accepted for v1 compatibility: a duration other than the service's is allowed whenever the service permits it (durationSelect) */
                    overrideDuration?: boolean;
                    /** @description Required when the service's roundRobin is NONE; with RANDOM or BALANCED the pool to pick from */
                    ResourceIds?: string[];
                };
            };
        };
        responses: {
            /** @description The created appointment */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    bookPublicAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Cara Jones",
                 *       "email": "cara.jones@example.com",
                 *       "phone": "2125550188",
                 *       "field1": "A loose filling"
                 *     }
                 */
                "application/json": {
                    name: string;
                    /** Format: email */
                    email: string;
                    phone?: string | null;
                    field1?: string;
                    field2?: string;
                    field3?: string;
                    field4?: string;
                    field5?: string;
                    field6?: string;
                    field7?: string;
                    field8?: string;
                    field9?: string;
                    field10?: string;
                };
            };
        };
        responses: {
            /** @description The appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Appointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query: {
                /** @description The location whose webhooks these are */
                locationId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Webhook"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query: {
                /** @description The location whose webhooks these are */
                locationId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://hooks.acme-dental.example/slotwise",
                 *       "headers": {
                 *         "x-shared-secret": "change-me"
                 *       },
                 *       "triggers": [
                 *         "NEW_APPOINTMENT",
                 *         "APPOINTMENT_CANCELLED"
                 *       ],
                 *       "active": true
                 *     }
                 */
                "application/json": {
                    /** @description Public https URL; query strings allowed. No credentials, fragment, IP literal, localhost or internal/metadata host. */
                    url: string;
                    /** @description Flat object of string values sent with every delivery. Hop-by-hop, framing, cookie, forwarding and cloud-metadata names are refused. */
                    headers?: {
                        [key: string]: string;
                    };
                    /** @description One or more trigger names, each at most once */
                    triggers: ("NEW_APPOINTMENT" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER")[];
                    /** @description false keeps the webhook and stops delivery (default true) */
                    active?: boolean;
                };
            };
        };
        responses: {
            /** @description The created webhook */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setWebhooks: {
        parameters: {
            query: {
                /** @description The location whose webhooks these are */
                locationId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "webhooks": [
                 *         {
                 *           "url": "https://hooks.acme-dental.example/slotwise",
                 *           "headers": {
                 *             "x-shared-secret": "change-me"
                 *           },
                 *           "triggers": [
                 *             "NEW_APPOINTMENT",
                 *             "APPOINTMENT_CANCELLED"
                 *           ],
                 *           "active": true
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    webhooks: {
                        /** @description Public https URL; query strings allowed. No credentials, fragment, IP literal, localhost or internal/metadata host. */
                        url: string;
                        /** @description Flat object of string values sent with every delivery. Hop-by-hop, framing, cookie, forwarding and cloud-metadata names are refused. */
                        headers?: {
                            [key: string]: string;
                        };
                        /** @description One or more trigger names, each at most once */
                        triggers: ("NEW_APPOINTMENT" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER")[];
                        /** @description false keeps the webhook and stops delivery (default true) */
                        active?: boolean;
                    }[];
                };
            };
        };
        responses: {
            /** @description The webhook records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Webhook"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateWebhook: {
        parameters: {
            query?: {
                /** @description When given, the webhook must belong to this location (else 404) */
                locationId?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "active": false
                 *     }
                 */
                "application/json": {
                    /** @description Public https URL; query strings allowed. No credentials, fragment, IP literal, localhost or internal/metadata host. */
                    url?: string;
                    /** @description Flat object of string values sent with every delivery. Hop-by-hop, framing, cookie, forwarding and cloud-metadata names are refused. */
                    headers?: {
                        [key: string]: string;
                    };
                    /** @description One or more trigger names, each at most once */
                    triggers?: ("NEW_APPOINTMENT" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER")[];
                    /** @description false keeps the webhook and stops delivery (default true) */
                    active?: boolean;
                };
            };
        };
        responses: {
            /** @description The webhook */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: {
                /** @description When given, the webhook must belong to this location (else 404) */
                locationId?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchWebhook: {
        parameters: {
            query?: {
                /** @description When given, the webhook must belong to this location (else 404) */
                locationId?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "active": false
                 *     }
                 */
                "application/json": {
                    /** @description Public https URL; query strings allowed. No credentials, fragment, IP literal, localhost or internal/metadata host. */
                    url?: string;
                    /** @description Flat object of string values sent with every delivery. Hop-by-hop, framing, cookie, forwarding and cloud-metadata names are refused. */
                    headers?: {
                        [key: string]: string;
                    };
                    /** @description One or more trigger names, each at most once */
                    triggers?: ("NEW_APPOINTMENT" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER")[];
                    /** @description false keeps the webhook and stops delivery (default true) */
                    active?: boolean;
                };
            };
        };
        responses: {
            /** @description The webhook */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The webhook delivery records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["WebhookDelivery"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listTemplates: {
        parameters: {
            query?: {
                /** @description EMAIL (default) or SMS */
                channel?: "EMAIL" | "SMS";
                type?: "APPOINTMENT_BOOKED" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER" | "EXTERNAL_CALENDAR_EVENT";
                recipientType?: "CUSTOMER" | "RESOURCE" | "BUSINESS";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The notification template records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["NotificationTemplate"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    saveTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "type": "APPOINTMENT_BOOKED",
                 *       "recipientType": "CUSTOMER",
                 *       "channel": "EMAIL",
                 *       "subject": "See you on {{appointment.date}}",
                 *       "body": "Hello {{customer.firstName}}, your {{service.name}} is booked for {{appointment.startTime}}."
                 *     }
                 */
                "application/json": {
                    /**
                     * @description EXTERNAL_CALENDAR_EVENT cannot use channel SMS
                     * @enum {string}
                     */
                    type: "APPOINTMENT_BOOKED" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER" | "EXTERNAL_CALENDAR_EVENT";
                    /** @enum {string} */
                    recipientType: "CUSTOMER" | "RESOURCE" | "BUSINESS";
                    /**
                     * @description EMAIL (default) or SMS
                     * @enum {string}
                     */
                    channel?: "EMAIL" | "SMS";
                    /** @description Required for EMAIL; for SMS stored but never sent. Handlebars merge variables. */
                    subject?: string;
                    /** @description Handlebars merge variables; nested {{#each}} blocks are refused */
                    body: string;
                };
            };
        };
        responses: {
            /** @description The notification template */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotificationTemplate"];
                };
            };
            /** @description The created notification template */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NotificationTemplate"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listDefaultTemplates: {
        parameters: {
            query?: {
                /** @description EMAIL (default) or SMS */
                channel?: "EMAIL" | "SMS";
                type?: "APPOINTMENT_BOOKED" | "APPOINTMENT_CONFIRMED" | "APPOINTMENT_CANCELLED" | "APPOINTMENT_RESCHEDULED" | "APPOINTMENT_REMINDER" | "EXTERNAL_CALENDAR_EVENT";
                recipientType?: "CUSTOMER" | "RESOURCE" | "BUSINESS";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The default notification template records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["DefaultNotificationTemplate"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteTemplate: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Done; no body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listNotifications: {
        parameters: {
            query?: {
                appointmentId?: string;
                channel?: "EMAIL" | "SMS";
                status?: "pending" | "sent" | "not_sent" | "failed" | "interrupted";
                /** @description Page size, at most 100 */
                limit?: number;
                /** @description Page number, from 1 (at most 1,000,000) */
                page?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The notification records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Notification"][];
                        page: number;
                        limit: number;
                        total: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    connectExternalCalendar: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "provider": "google",
                 *       "redirectUrl": "https://book.acme-dental.example/calendar-connected",
                 *       "useOnSchedCalendarSelection": true
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    provider: "google" | "microsoft" | "caldav";
                    /**
                     * @description google, microsoft: the callback hands back a one-time code for a Calendar Selection Token
                     * @default false
                     */
                    useOnSchedCalendarSelection?: boolean;
                    /** @description google, microsoft: where the browser returns; its host must be one of the company's allowedDomains */
                    redirectUrl?: string;
                    /** @description caldav: the server, principal or calendar URL (https) */
                    url?: string;
                    username?: string;
                    /** @description caldav: an app password; stored encrypted, never returned */
                    password?: string;
                };
            };
        };
        responses: {
            /** @description Success: Connect an external calendar to a resource */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        /** @enum {string} */
                        provider: "google" | "microsoft" | "caldav";
                        /** @enum {string} */
                        status: "pending" | "connected" | "error";
                        /** @description google, microsoft: open it in the user's browser */
                        authUrl?: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    externalCalendarCallback: {
        parameters: {
            query?: {
                code?: string;
                state?: string;
                error?: string;
                error_description?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description To the redirectUrl, with `code` and `connectionId`, or `status` (`connected` or `error`), `error` and `connectionId` */
            302: {
                headers: {
                    /** @description The redirectUrl with the answer in its query */
                    location?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createCalendarSelectionSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "code": "csc_Zx81Qm0pT4vR7yN2kL5sB9dW"
                 *     }
                 */
                "application/json": {
                    code: string;
                };
            };
        };
        responses: {
            /** @description Success: Exchange a one-time selection code for a Calendar Selection Token */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        token: string;
                        /** @enum {string} */
                        tokenType: "Bearer";
                        expiresIn: number;
                        /** Format: uuid */
                        connectionId: string;
                        /** Format: uuid */
                        resourceId: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listExternalCalendarConnections: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The external calendar connection records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ExternalCalendarConnection"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listExternalCalendars: {
        parameters: {
            query?: {
                provider?: "google" | "microsoft" | "caldav";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The external calendar records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ExternalCalendar"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    selectExternalCalendars: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "calendarIds": [
                 *         "ann.lee@acme-dental.example",
                 *         "holidays@group.calendar.example"
                 *       ],
                 *       "writeCalendarId": "ann.lee@acme-dental.example"
                 *     }
                 */
                "application/json": {
                    /** @enum {string} */
                    provider?: "google" | "microsoft" | "caldav";
                    /** @description Calendars read as busy time */
                    calendarIds: string[];
                    /** @description Calendar booked appointments are written to; null stops writing */
                    writeCalendarId?: string | null;
                };
            };
        };
        responses: {
            /** @description The external calendar records, in `data` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["ExternalCalendar"][];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    syncExternalCalendars: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: Read the resource's selected calendars now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        imported: number;
                        updated: number;
                        removed: number;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    disconnectExternalCalendar: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                connectionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Disconnected */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    mapLegacyIds: {
        parameters: {
            query?: {
                /** @description A v1 location id */
                locationId?: string;
                /** @description A v1 service id */
                serviceId?: string;
                /** @description A v1 resource id */
                resourceId?: string;
                /** @description A v1 customer id */
                customerId?: string;
                /** @description A v1 appointment id */
                appointmentId?: string;
                /** @description A v1 allocation (service or resource allocation) id */
                allocationId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: v1 ids to v3 ids (only the keys asked) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        locationId?: string | null;
                        serviceId?: string | null;
                        resourceId?: string | null;
                        customerId?: string | null;
                        appointmentId?: string | null;
                        /** @description Weekly and single allocations made from the v1 allocation */
                        allocationId?: string[];
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    migrateFromV1: {
        parameters: {
            query?: never;
            header?: {
                /** @description `respond-async` answers 202 with a job even for a small import */
                prefer?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "source": {
                 *         "type": "export",
                 *         "data": {
                 *           "locations": [
                 *             {
                 *               "id": "12",
                 *               "name": "Downtown Studio",
                 *               "timezoneIana": "America/New_York",
                 *               "businessHours": {
                 *                 "mon": {
                 *                   "startTime": 900,
                 *                   "endTime": 1900,
                 *                   "isOpen": true,
                 *                   "is24Hours": false
                 *                 }
                 *               },
                 *               "services": []
                 *             }
                 *           ],
                 *           "services": [
                 *             {
                 *               "id": "301",
                 *               "locationId": "12",
                 *               "type": "1",
                 *               "name": "Personal Training",
                 *               "duration": 60,
                 *               "maxCapacity": 1,
                 *               "roundRobin": 2
                 *             }
                 *           ],
                 *           "resources": [
                 *             {
                 *               "id": "1502",
                 *               "locationId": "12",
                 *               "name": "Ben Carter",
                 *               "email": "ben@studio.example",
                 *               "timezoneIana": "America/New_York",
                 *               "services": []
                 *             }
                 *           ]
                 *         }
                 *       },
                 *       "dryRun": true
                 *     }
                 */
                "application/json": {
                    /** @description Where the v1 data comes from */
                    source: {
                        /** @enum {string} */
                        type: "api";
                        /**
                         * Format: uri
                         * @description The v1 API, for example https://api.onsched.com (https, public address)
                         */
                        baseUrl: string;
                        /**
                         * Format: uri
                         * @description The v1 identity server token endpoint (https, public address)
                         */
                        tokenUrl: string;
                        clientId: string;
                        /** @description Kept encrypted while the job runs, deleted when it ends, never returned */
                        clientSecret: string;
                    } | {
                        /** @enum {string} */
                        type: "export";
                        /** @description A v1 export document (decisions.md "Migration") */
                        data: {
                            /** @description v1 location records, as the v1 API answers them (shared/spec/v1-source.md) */
                            locations?: unknown[];
                            /** @description v1 service records, as the v1 API answers them (shared/spec/v1-source.md) */
                            services?: unknown[];
                            /** @description v1 resource records, as the v1 API answers them (shared/spec/v1-source.md) */
                            resources?: unknown[];
                            /** @description v1 service allocation records, as the v1 API answers them (shared/spec/v1-source.md) */
                            serviceAllocations?: unknown[];
                            /** @description v1 resource allocation records, as the v1 API answers them (shared/spec/v1-source.md) */
                            resourceAllocations?: unknown[];
                            /** @description v1 resource block records, as the v1 API answers them (shared/spec/v1-source.md) */
                            resourceBlocks?: unknown[];
                            /** @description v1 customer records, as the v1 API answers them (shared/spec/v1-source.md) */
                            customers?: unknown[];
                            /** @description v1 appointment records, as the v1 API answers them (shared/spec/v1-source.md) */
                            appointments?: unknown[];
                        };
                    };
                    /**
                     * @description Report what would happen; write nothing
                     * @default false
                     */
                    dryRun?: boolean;
                };
            };
        };
        responses: {
            /** @description Success: Import a v1 company (live API or export document) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        dryRun: boolean;
                        /** @description Records created by this run (a dry run: that would be created). Allocations count v3 rows (one per weekday or date). */
                        created: {
                            locations: number;
                            services: number;
                            resources: number;
                            weeklyAllocations: number;
                            singleAllocations: number;
                            recurringBlocks: number;
                            customers: number;
                            appointments: number;
                        };
                        /** @description Records the company already had (same legacyId, or for customers the same email) */
                        skipped: {
                            locations: number;
                            services: number;
                            resources: number;
                            weeklyAllocations: number;
                            singleAllocations: number;
                            recurringBlocks: number;
                            customers: number;
                            appointments: number;
                        };
                        /** @description Records that did not migrate, each with the reason */
                        failed: {
                            kind: "locations" | "services" | "resources" | "weeklyAllocations" | "singleAllocations" | "recurringBlocks" | "customers" | "appointments";
                            /** @description The v1 id (null when the record has none that can be read) */
                            legacyId: string | null;
                            message: string;
                        }[];
                        /** @description Records left behind on purpose: deleted in v1, ended allocations, past appointments, v1 holds */
                        ignored: {
                            locations: number;
                            services: number;
                            resources: number;
                            weeklyAllocations: number;
                            singleAllocations: number;
                            recurringBlocks: number;
                            customers: number;
                            appointments: number;
                        };
                        /** @description Records that migrated with something dropped or changed (at most 1000) */
                        warnings: {
                            kind: "locations" | "services" | "resources" | "weeklyAllocations" | "singleAllocations" | "recurringBlocks" | "customers" | "appointments";
                            /** @description The v1 id (null when the record has none that can be read) */
                            legacyId: string | null;
                            message: string;
                        }[];
                        /** @description Warnings beyond the first 1000 */
                        warningsOmitted: number;
                    };
                };
            };
            /** @description Success: Import a v1 company (live API or export document) */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        /** Format: uuid */
                        companyId: string;
                        status: "running" | "succeeded" | "failed";
                        dryRun: boolean;
                        sourceType: "api" | "export";
                        /** @description Per kind: records in the plan, processed so far, and the counts of the report so far */
                        progress: {
                            locations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            services: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            resources: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            weeklyAllocations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            singleAllocations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            recurringBlocks: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            customers: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            appointments: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                        };
                        /** @description The final report; null while running */
                        report: components["schemas"]["MigrationReport"] | null;
                        /** @description Why a failed job stopped */
                        error: string | null;
                        /** @description Instances that started the run (more than 1: resumed after a stop) */
                        attempts: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        finishedAt: string | null;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflicts with an existing record */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getMigrationJob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Success: A migration job: progress per kind, then the report */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** Format: uuid */
                        id: string;
                        /** Format: uuid */
                        companyId: string;
                        status: "running" | "succeeded" | "failed";
                        dryRun: boolean;
                        sourceType: "api" | "export";
                        /** @description Per kind: records in the plan, processed so far, and the counts of the report so far */
                        progress: {
                            locations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            services: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            resources: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            weeklyAllocations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            singleAllocations: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            recurringBlocks: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            customers: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                            appointments: {
                                total: number;
                                processed: number;
                                created: number;
                                skipped: number;
                                failed: number;
                            };
                        };
                        /** @description The final report; null while running */
                        report: components["schemas"]["MigrationReport"] | null;
                        /** @description Why a failed job stopped */
                        error: string | null;
                        /** @description Instances that started the run (more than 1: resumed after a stop) */
                        attempts: number;
                        /** Format: date-time */
                        createdAt: string;
                        /** Format: date-time */
                        updatedAt: string;
                        finishedAt: string | null;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getManagedAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The managed appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ManagedAppointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Gone for good: the manage link's appointment was cancelled or moved to a new time */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelManagedAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The managed appointment */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ManagedAppointment"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Gone for good: the manage link's appointment was cancelled or moved to a new time */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rescheduleManagedAppointment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Unavailability": {
                 *         "startTime": "2026-12-08T14:00:00-05:00",
                 *         "endTime": "2026-12-08T15:00:00-05:00"
                 *       }
                 *     }
                 */
                "application/json": {
                    Unavailability: {
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        startTime: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 with an offset
                         */
                        endTime: string;
                    };
                    /** @description Minutes; must equal endTime - startTime */
                    duration?: number;
                    /** @description Accepted for v1 compatibility: a duration other than the service's is allowed whenever the service permits it (durationSelect) */
                    overrideDuration?: boolean;
                    /** @description Required when the service's roundRobin is NONE; with RANDOM or BALANCED the pool to pick from */
                    ResourceIds?: string[];
                };
            };
        };
        responses: {
            /** @description Success: Move the manage link's appointment to a slot from GET /v3/manage/availability (BK → RE plus a new BK); the old link then answers 410 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        appointment: components["schemas"]["ManagedAppointment"];
                        /** @description The replacement's manage token; the new confirmation email carries its link too */
                        manageToken: string;
                    };
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Gone for good: the manage link's appointment was cancelled or moved to a new time */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    searchManagedAvailability: {
        parameters: {
            query: {
                /** @description YYYY-MM-DD, a local date of the location */
                startDate: string;
                /** @description Default: startDate. At most 31 days after it. */
                endDate?: string;
                /** @description Minutes; one of the service's duration options */
                duration?: number;
                /** @description Comma-separated, or repeated */
                ResourceIds?: string[];
                /** @description IANA zone in which startDate and endDate are read and availableDays are reported (default: the location's); slots stay UTC instants */
                timezone?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The availability */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Availability"];
                };
            };
            /** @description The request data is wrong (validation, an id that is not the company's, a booking rule) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Missing, invalid or expired credentials */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not allowed for this caller (scope, role, suspended company, machine token, Origin) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The record in the path does not exist, is archived, or belongs to another company */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Gone for good: the manage link's appointment was cancelled or moved to a new time */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
}
