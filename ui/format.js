// How the dashboard shows counts and names (docs/dashboard.md#names-and-numbers). Counts are
// kept as the API answered them (a Number, or a BigInt past 2^53 once parseJsonText gives
// one) and turned into text, plot positions or shares only here.

const COUNT = new Intl.NumberFormat('en-US');

// "12,345" (exact for a BigInt too).
export function formatCount(v) {
  if (v === null || v === undefined) return '—';
  return typeof v === 'bigint' ? v.toLocaleString('en-US') : COUNT.format(v);
}

// The count as it is written in a CSV: every digit, no separators.
export function countText(v) {
  return String(v);
}

// A position on a chart's axis (a chart needs a Number; 2^53 is far past any pixel).
export function countToNumber(v) {
  return typeof v === 'bigint' ? Number(v) : v;
}

// v as a share of total: "12.3 %"; "—" without a total.
export function formatShare(v, total) {
  const t = countToNumber(total);
  if (!t) return '—';
  const p = (100 * countToNumber(v)) / t;
  return `${p >= 10 || p === 0 ? p.toFixed(1) : p.toPrecision(2)} %`;
}

// The share as a number of percent with 2 decimals (the CSV's).
export function shareText(v, total) {
  const t = countToNumber(total);
  return t ? ((100 * countToNumber(v)) / t).toFixed(2) : '';
}

const regions = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null;

// "United States" for "US"; null when the code names no region the browser knows.
export function countryName(code) {
  if (!regions || !/^[A-Z]{2}$/.test(code)) return null;
  try {
    const name = regions.of(code);
    return name && name !== code ? name : null;
  } catch (e) {
    return null;
  }
}
