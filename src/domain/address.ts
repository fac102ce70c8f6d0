import { iso31661, iso31662 } from 'iso-3166';

/**
 * ISO 3166 checks of an address from the maintained `iso-3166` data (ISO 3166-1 alpha-2 countries,
 * ISO 3166-2 subdivisions), not a hand-typed list. `state` is the subdivision code without its
 * country prefix: `CA` for US-CA, `MH` for IN-MH, `ENG` for GB-ENG.
 */
const COUNTRIES = new Set(iso31661.map((entry) => entry.alpha2));
const SUBDIVISIONS = new Set(iso31662.map((entry) => entry.code));
const COUNTRIES_WITH_SUBDIVISIONS = new Set(iso31662.map((entry) => entry.code.slice(0, 2)));

/** A postal address as stored on locations; country and state are ISO 3166 codes. */
export interface Address {
  addressLine1?: string;
  addressLine2?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country: string;
}

export interface AddressProblem {
  path: string;
  msg: string;
  code: string;
}

/** Country and state in capitals, as ISO 3166 writes them. */
export function normalizeAddress(address: Address): Address {
  return {
    ...address,
    country: address.country.toUpperCase(),
    ...(address.state !== undefined ? { state: address.state.toUpperCase() } : {}),
  };
}

export function addressProblems(address: Address, prefix = 'address'): AddressProblem[] {
  const { country, state } = normalizeAddress(address);
  if (!COUNTRIES.has(country)) {
    return [{ path: `${prefix}.country`, msg: `${prefix}.country "${address.country}" is not an ISO 3166-1 alpha-2 country code`, code: 'ADDRESS-107' }];
  }
  if (state !== undefined && !SUBDIVISIONS.has(`${country}-${state}`)) {
    const hint = COUNTRIES_WITH_SUBDIVISIONS.has(country)
      ? `use the ISO 3166-2 subdivision code without "${country}-"`
      : `${country} has no ISO 3166-2 subdivisions; leave state out`;
    return [{ path: `${prefix}.state`, msg: `${prefix}.state "${address.state}" is not a subdivision of ${country}: ${hint}`, code: 'ADDRESS-108' }];
  }
  return [];
}
