import { fieldError } from '../../platform/errors.js';
import type { FieldError } from '../../platform/errors.js';

const HOST_PATTERN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/;

/**
 * An Allowed Domain is the exact host (with port, if any) that a public booking page's Origin must
 * carry; http and https origins both match it. Accepted forms: `booking.example.com`,
 * `localhost:5173`, or a whole origin `https://booking.example.com`, which is reduced to its host.
 * A wildcard is never allowed (specification, Public flow 2).
 */
export function normaliseAllowedDomains(values: string[]): { domains: string[]; errors: FieldError[] } {
  const domains: string[] = [];
  const errors: FieldError[] = [];
  values.forEach((raw, index) => {
    const path = `allowedDomains.${index}`;
    const value = raw.trim().toLowerCase();
    if (value.includes('*')) {
      errors.push(fieldError('body', path, `"${raw}" is not allowed: wildcards cannot be Allowed Domains`, 'COMPANY-102'));
      return;
    }
    let host = value;
    if (/^[a-z][a-z0-9+.-]*:\/\//.test(value)) {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        errors.push(fieldError('body', path, `"${raw}" is not a valid domain`, 'COMPANY-102'));
        return;
      }
      const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
      if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !bare) {
        errors.push(fieldError('body', path, `"${raw}" must be a host or an http(s) origin without path`, 'COMPANY-102'));
        return;
      }
      host = url.host;
    }
    if (!HOST_PATTERN.test(host) || host.length > 260) {
      errors.push(fieldError('body', path, `"${raw}" is not a valid domain`, 'COMPANY-102'));
      return;
    }
    if (!domains.includes(host)) domains.push(host);
  });
  return { domains, errors };
}
