/**
 * The company's brand colour as the page can use it: buttons and links draw it as text on white
 * (and on the page's #f6f6f4), so it must keep WCAG AA contrast, 4.5:1, against both. A colour too
 * light is darkened (mixed with black) just enough. Pure: no DOM.
 */

export const DEFAULT_BRAND = '#1d4e89';
/** The lightest background the brand colour is drawn on or against (styles.css). */
const BACKGROUNDS = ['#ffffff', '#f6f6f4'];
const MINIMUM = 4.5;

const channels = (hex: string): [number, number, number] => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
const toHex = (rgb: number[]) => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2 relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/**
 * `color` when it reads at 4.5:1 on every background, else the lightest shade of it (mixed with
 * black in 5 % steps) that does; the default blue for a missing or malformed colour.
 */
export function readableBrand(color: string | null | undefined): string {
  if (!color || !/^#[0-9a-fA-F]{6}$/.test(color)) return DEFAULT_BRAND;
  const base = channels(color.toLowerCase());
  for (let step = 0; step <= 20; step++) {
    const shade = toHex(base.map((c) => c * (1 - step / 20)));
    if (BACKGROUNDS.every((background) => contrastRatio(shade, background) >= MINIMUM)) return shade;
  }
  return '#000000';
}
