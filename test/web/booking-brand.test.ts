// The booking page's pure parts: the brand colour kept readable (WCAG AA 4.5:1 on white and on the
// page's background) and fees in the company's currency.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { contrastRatio, DEFAULT_BRAND, readableBrand } from '../../web/booking/brand.js';
import { formatFee } from '../../web/booking/fees.js';

describe('readableBrand', () => {
  test('contrastRatio follows WCAG 2: black on white is 21, a colour on itself is 1', () => {
    assert.equal(Math.round(contrastRatio('#000000', '#ffffff') * 100) / 100, 21);
    assert.equal(contrastRatio('#ffffff', '#000000'), contrastRatio('#000000', '#ffffff'));
    assert.equal(contrastRatio('#1d4e89', '#1d4e89'), 1);
    // A published pair: #767676 on white is just over 4.5:1.
    assert.ok(contrastRatio('#767676', '#ffffff') > 4.5 && contrastRatio('#767676', '#ffffff') < 4.6);
  });

  test('a dark enough colour is kept as it is', () => {
    assert.equal(readableBrand('#1d4e89'), '#1d4e89');
    assert.equal(readableBrand('#0B6E4F'), '#0b6e4f');
    assert.equal(readableBrand('#000000'), '#000000');
  });

  test('a light colour is darkened just enough to read at 4.5:1 on white and on #f6f6f4', () => {
    for (const light of ['#ffcc00', '#ffffff', '#66ccff', '#ff6f61', '#7f7f7f']) {
      const shade = readableBrand(light);
      assert.notEqual(shade, light);
      assert.ok(contrastRatio(shade, '#ffffff') >= 4.5, `${light} → ${shade} on white`);
      assert.ok(contrastRatio(shade, '#f6f6f4') >= 4.5, `${light} → ${shade} on the page`);
      assert.equal(readableBrand(shade), shade, 'the shade itself is kept');
    }
    // The hue stays: a yellow becomes a dark yellow (red above green above blue, blue 0).
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(readableBrand('#ffcc00').slice(i, i + 2), 16)) as [number, number, number];
    assert.ok(r > g && g > b && b === 0);
  });

  test('a missing or malformed colour is the default blue', () => {
    for (const value of [null, undefined, '', 'red', '#fff', '#12345g']) assert.equal(readableBrand(value), DEFAULT_BRAND);
  });
});

describe('formatFee', () => {
  test('no fee or 0 is Free; no currency is the bare amount; a currency formats it', () => {
    assert.equal(formatFee(null, 'EUR'), 'Free');
    assert.equal(formatFee(0, 'EUR'), 'Free');
    assert.equal(formatFee(25, null), '25.00');
    assert.equal(formatFee(25, 'EUR'), '€25.00');
    assert.equal(formatFee(1234.5, 'USD'), '$1,234.50');
    assert.equal(formatFee(500, 'JPY'), '¥500');
  });
});
