// Time in the dashboard's chosen zone (docs/dashboard.md#time-range): local fields of an
// instant, the instant of a local time, the ranges of the presets and of `from`/`to`, the
// unit that suits a range, bucket labels and offsets. A zone is an IANA name (through the
// browser's Intl zone data) or an integer hour offset ("-5", "+9"). Instants are unix seconds.
//
// A local time that does not exist (inside a DST gap) is the instant the clocks jump, and an
// ambiguous one (a fall-back) its earlier instant — the API's rule (docs/api-read.md#buckets-and-time-zones),
// so a range the page computes starts where the API's buckets do.

export const isOffsetZone = (tz) => /^[+-]?\d{1,2}$/.test(tz);

const partFormatters = new Map();
function partsFormatter(tz) {
  let f = partFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric',
      hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    partFormatters.set(tz, f);
  }
  return f;
}

// True when the browser can show times in tz.
export function zoneKnown(tz) {
  if (isOffsetZone(tz)) return Math.abs(Number(tz)) <= 14;
  try {
    partsFormatter(tz);
    return true;
  } catch (e) {
    return false;
  }
}

// Seconds east of UTC in tz at the instant t.
export function offsetAt(tz, t) {
  if (isOffsetZone(tz)) return Number(tz) * 3600;
  if (tz === 'UTC') return 0;
  const p = {};
  for (const { type, value } of partsFormatter(tz).formatToParts(new Date(t * 1000))) p[type] = Number(value);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) / 1000;
  return asUtc - Math.floor(t);
}

// {year, month (1-12), day, hour, minute, weekday (0 = Sunday)} of t in tz.
export function localFields(tz, t) {
  const d = new Date((t + offsetAt(tz, t)) * 1000);
  return {
    year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(),
    hour: d.getUTCHours(), minute: d.getUTCMinutes(), weekday: d.getUTCDay(),
  };
}

// The instant of a local time in tz (earliest when ambiguous, the jump when inside a gap).
export function localToUtc(tz, year, month, day, hour = 0, minute = 0) {
  const local = Date.UTC(year, month - 1, day, hour, minute) / 1000;
  if (isOffsetZone(tz)) return local - Number(tz) * 3600;
  const before = local - offsetAt(tz, local - 86400);
  const after = local - offsetAt(tz, local + 86400);
  const fits = (t) => t + offsetAt(tz, t) === local;
  const found = [before, after].filter(fits);
  if (found.length) return Math.min(...found);
  // A gap: the first instant with the later offset, between the two readings.
  let lo = Math.min(before, after);
  let hi = Math.max(before, after);
  const late = offsetAt(tz, hi);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(tz, mid) === late) hi = mid; else lo = mid;
  }
  return hi;
}

// The civil date n days after y-m-d.
export function addDays(y, m, d, n) {
  const t = new Date(Date.UTC(y, m - 1, d + n));
  return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate() };
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

// The presets (docs/dashboard.md#time-range): each ends at the reference (now, or `ref`),
// drawn by its unit unless one is chosen.
export const PRESETS = [
  { id: '24h', label: '24 h', unit: 'hour' },
  { id: '7d', label: '7 d', unit: 'hour' },
  { id: '30d', label: '30 d', unit: 'day' },
  { id: '90d', label: '90 d', unit: 'day' },
  { id: 'month', label: 'this month', unit: 'day' },
];

// The start of a preset range ending with the second `ref` (inclusive) in tz.
export function presetStart(preset, tz, ref) {
  if (preset === '24h') return ref - (ref % 3600) - 23 * 3600;
  const f = localFields(tz, ref);
  if (preset === 'month') return localToUtc(tz, f.year, f.month, 1);
  const back = { '7d': 6, '30d': 29, '90d': 89 }[preset];
  if (back === undefined) return null;
  const d = addDays(f.year, f.month, f.day, -back);
  return localToUtc(tz, d.year, d.month, d.day);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})$/;

// A `from` or `to` as an instant: unix seconds, a date (its local midnight; for `to`, the end
// of that day), or a local date and time; throws an Error naming the text otherwise.
export function parseBound(text, tz, isEnd) {
  const s = String(text).trim();
  if (/^\d{9,11}$/.test(s)) return Number(s);
  let m = DATE.exec(s);
  if (m) {
    let d = { year: +m[1], month: +m[2], day: +m[3] };
    if (isEnd) d = addDays(d.year, d.month, d.day, 1);
    if (validDate(+m[1], +m[2], +m[3])) return localToUtc(tz, d.year, d.month, d.day);
  }
  m = DATETIME.exec(s);
  if (m && validDate(+m[1], +m[2], +m[3]) && +m[4] < 24 && +m[5] < 60) {
    return localToUtc(tz, +m[1], +m[2], +m[3], +m[4], +m[5]);
  }
  throw new Error(`${isEnd ? 'to' : 'from'} '${s}' is not a date (YYYY-MM-DD), a local time (YYYY-MM-DDTHH:MM) or unix seconds`);
}

function validDate(y, m, d) {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

// How an instant is written in a URL's `from`/`to`: a date for a local midnight, a local time
// for a whole minute, each only when it reads back as the same instant; else unix seconds.
export function formatBound(t, tz, isEnd) {
  const f = localFields(tz, isEnd ? t - 1 : t);
  if (!isEnd && f.hour === 0 && f.minute === 0 && t % 60 === 0) {
    const text = `${f.year}-${pad(f.month)}-${pad(f.day)}`;
    if (parseBound(text, tz, false) === t) return text;
  }
  if (isEnd) {
    const text = `${f.year}-${pad(f.month)}-${pad(f.day)}`;
    if (parseBound(text, tz, true) === t) return text;
  }
  const g = localFields(tz, t);
  const text = `${g.year}-${pad(g.month)}-${pad(g.day)}T${pad(g.hour)}:${pad(g.minute)}`;
  if (t % 60 === 0 && parseBound(text, tz, isEnd) === t) return text;
  return String(t);
}

// Approximate seconds a unit spans (for choosing one, never for buckets: the API makes those).
const UNIT_SECONDS = { hour: 3600, day: 86400, week: 604800, mweek: 604800, month: 2629746 };
export const UNITS = Object.keys(UNIT_SECONDS);
export const MAX_POINTS = 3000;

// About how many buckets of unit the range [start, end) holds.
export function approxBuckets(start, end, unit) {
  return Math.ceil((end - start) / UNIT_SECONDS[unit]);
}

// The unit a range is drawn in: the user's choice when it gives at most MAX_POINTS buckets,
// else the preset's, else hours up to 14 days, days up to a year and a half, weeks from Monday
// up to 5 years, months beyond.
export function unitFor(start, end, chosen, preset) {
  if (chosen && UNIT_SECONDS[chosen] && approxBuckets(start, end, chosen) <= MAX_POINTS) return chosen;
  const own = PRESETS.find((x) => x.id === preset);
  if (own) return own.unit;
  const days = (end - start) / 86400;
  if (days <= 14) return 'hour';
  if (days <= 550) return 'day';
  if (days <= 5 * 366) return 'mweek';
  return 'month';
}

// The bucket start dt as local time in tz: "2026-11-01 01:00" (hours), "2026-11" (months),
// "2026-11-01" (the others).
export function bucketLabel(dt, unit, tz) {
  const f = localFields(tz || 'UTC', dt);
  const day = `${f.year}-${pad(f.month)}-${pad(f.day)}`;
  if (unit === 'hour') return `${day} ${pad(f.hour)}:${pad(f.minute)}`;
  if (unit === 'month') return `${f.year}-${pad(f.month)}`;
  return day;
}

// "UTC-4", "UTC+9", "UTC" for the offset of tz at t.
export function offsetLabel(tz, t) {
  const h = offsetAt(tz, t) / 3600;
  return h === 0 ? 'UTC' : `UTC${h > 0 ? '+' : '-'}${Math.abs(h)}`;
}

const abbreviationFormatters = new Map();
// The zone's own short name at t when it has one ("EDT"), else null.
export function zoneAbbreviation(tz, t) {
  if (isOffsetZone(tz)) return null;
  let f = abbreviationFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'short' });
    abbreviationFormatters.set(tz, f);
  }
  const name = f.formatToParts(new Date(t * 1000)).find((p) => p.type === 'timeZoneName');
  return name && /^[A-Z]{2,5}$/.test(name.value) ? name.value : null;
}

// "2026-11-01 01:00 EDT (UTC-4, America/New_York)": an instant with its zone and offset, so
// the two 01:00s of a fall-back read apart ("… (UTC+5)" in an offset zone).
export function instantLabel(t, tz) {
  const zone = tz || 'UTC';
  const abbr = zoneAbbreviation(zone, t);
  const named = !isOffsetZone(zone) && zone !== 'UTC';
  return `${bucketLabel(t, 'hour', zone)} ${abbr && abbr !== 'UTC' ? `${abbr} ` : ''}(${offsetLabel(zone, t)}${named ? `, ${zone}` : ''})`;
}

// "2026-11-01T01:00-04:00": an instant as ISO 8601 local time with its offset (the CSV's).
export function isoLocal(t, tz) {
  const f = localFields(tz, t);
  const off = offsetAt(tz, t);
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${f.year}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}${sign}${pad(Math.floor(a / 3600))}:${pad(Math.floor((a % 3600) / 60))}`;
}
