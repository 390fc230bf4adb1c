// The Clickatron dashboard (docs/dashboard.md): ES modules, no build step. Chart.js comes from
// Debian's libjs-chart.js, served by clickatron-api as /ui/chart.js (window.Chart).
//
// The view is in the URL (?view=&ns=&key=&range=&from=&to=&unit=&tz=&ref=&cmp=&prev=&scale=
// &axis=&blimit=&live=; docs/dashboard.md#the-url): shareable, and back/forward restore it.
// Everything shown is in window.dashboardState, which the browser tests read. Every request
// goes through api.js's fetchJson; counts are formatted by format.js; times by time.js.

import { ApiError, fetchJson } from './api.js';
import { countText, countToNumber, countryName, formatCount, formatShare, shareText } from './format.js';
import * as T from './time.js';

const Chart = window.Chart;
const $ = (id) => document.getElementById(id);

const DEFAULTS = {
  view: 'explore', ns: '', key: '', range: '30d', from: '', to: '', units: '', unit: '', tz: 'UTC', ref: '',
  cmp: '', prev: '', scale: '', axis: '', blimit: '10', live: '',
};
const PARAMS = Object.keys(DEFAULTS);
const LIVE_MS = { '2s': 2000, '10s': 10000, '1m': 60000 };
const THEMES = ['auto', 'dark', 'light'];
const THEME_KEY = 'clickatron.theme';

const state = {
  view: 'explore', params: { ...DEFAULTS }, ready: false, busy: 0, loads: 0, renders: 0,
  range: null, namespaces: null, zones: [], leaderboard: null, health: null,
  series: null, compare: null, previous: null, totals: null, missing: false,
  subtotals: [], breakdowns: {}, suggestions: [], cluster: null,
  error: null, panelErrors: {}, loading: {}, lastUpdated: null, lastExport: null, timings: {}, theme: 'auto',
};
window.dashboardState = state;

// ---- errors ---------------------------------------------------------------------------------

function errorInfo(e) {
  return { status: e.status ?? 0, status_txt: e.statusTxt || 'ERROR', message: e.message };
}

function showError(info) {
  const box = $('error');
  state.error = info;
  box.hidden = !info;
  box.textContent = info ? `${info.status_txt}: ${info.message}` : '';
}

// ---- URL state --------------------------------------------------------------------------------

// The query string, read as written: '+' is a plus (a zone '+5' stays '+5'); the page writes
// spaces as %20.
function readUrl() {
  const p = { ...DEFAULTS };
  for (const part of location.search.replace(/^\?/, '').split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = decodePart(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? '' : decodePart(part.slice(eq + 1));
    if (name !== null && value !== null && name in DEFAULTS) p[name] = value;
  }
  if (p.live === '1') p.live = '2s';  // the older form: on
  if (!(p.live in LIVE_MS)) p.live = '';
  return p;
}

function decodePart(s) {
  try {
    return decodeURIComponent(s);
  } catch (e) {
    return null;
  }
}

const encodePart = (v) => encodeURIComponent(v).replace(/%2F/g, '/').replace(/%3A/g, ':');

function searchOf(p) {
  const q = PARAMS.filter((k) => p[k] !== '' && p[k] !== DEFAULTS[k]).map((k) => `${k}=${encodePart(p[k])}`);
  return q.length ? `?${q.join('&')}` : '';
}

function writeUrl(p, replace) {
  const search = searchOf(p);
  if (search === location.search) return;
  const url = search || location.pathname;
  if (replace) history.replaceState(null, '', url); else history.pushState(null, '', url);
}

// ---- the range --------------------------------------------------------------------------------

const nowSeconds = () => Math.floor(Date.now() / 1000);

// What the view draws (docs/dashboard.md#time-range): {kind: preset|absolute|count, start,
// end (exclusive), unit, notice}. Throws an Error naming a bad from/to.
function rangeOf(p) {
  const tz = p.tz || 'UTC';
  const ref = p.ref && /^\d+$/.test(p.ref) ? Number(p.ref) : nowSeconds();
  if (p.units || !T.zoneKnown(tz)) {
    // The last `units` buckets (the older URL form), or a zone this browser cannot place:
    // the API makes the buckets (and names a zone it does not take).
    return { kind: 'count', units: p.units || '30', unit: p.unit || 'day', ref, start: null, end: ref + 1 };
  }
  let r;
  if (p.from || p.to) {
    const end = p.to ? T.parseBound(p.to, tz, true) : ref + 1;
    const start = p.from ? T.parseBound(p.from, tz, false) : end - 30 * 86400;
    if (!(end > start)) throw new Error(`the range ends (${p.to || 'now'}) before it begins (${p.from})`);
    r = { kind: 'absolute', start, end };
  } else {
    const preset = T.PRESETS.some((x) => x.id === p.range) ? p.range : DEFAULTS.range;
    r = { kind: 'preset', preset, start: T.presetStart(preset, tz, ref), end: ref + 1 };
  }
  r.unit = T.unitFor(r.start, r.end, p.unit, r.preset);
  if (p.unit && r.unit !== p.unit) {
    r.notice = `${p.unit} buckets would be about ${formatCount(T.approxBuckets(r.start, r.end, p.unit))} points; drawn by ${r.unit}`;
  }
  return r;
}

// The API parameters of a range.
function rangeQuery(r, p) {
  const q = { unit: r.unit, timezone: p.tz || 'UTC' };
  if (r.kind === 'count') {
    q.units = r.units;
    q.unit_reference_ts = r.ref;
  } else {
    q.start = r.start;
    q.end = r.end;
  }
  return q;
}

// The period before the range, as long (a count range: as many buckets before its first).
function previousQuery(r, p, oldestDt) {
  if (r.kind === 'count') return { unit: r.unit, timezone: p.tz || 'UTC', units: r.units, unit_reference_ts: oldestDt - 1 };
  const span = r.end - r.start;
  return { unit: r.unit, timezone: p.tz || 'UTC', start: Math.max(946684800, r.start - span), end: r.start };
}

// ---- names --------------------------------------------------------------------------------------

function displayName(ns) {
  const names = state.namespaces && state.namespaces.display_names;
  return (names && names[ns]) || ns;
}

const keyLabel = (ns, key) => (displayName(ns) !== ns ? `${key} (${displayName(ns)})` : `${ns}|${key}`);

function subkeyName(sub, subkey) {
  const codes = state.namespaces && state.namespaces.country_codes;
  return codes && codes.includes(sub) ? countryName(subkey) : null;
}

// ---- theme --------------------------------------------------------------------------------------

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function applyTheme(theme) {
  state.theme = THEMES.includes(theme) ? theme : 'auto';
  if (state.theme === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = state.theme;
  $('theme').textContent = `theme: ${state.theme}`;
  Chart.defaults.color = cssVar('--muted');
  Chart.defaults.borderColor = cssVar('--grid');
}

function toggleTheme() {
  const next = THEMES[(THEMES.indexOf(state.theme) + 1) % THEMES.length];
  try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* storage refused: this page only */ }
  applyTheme(next);
  redrawCharts();
}

// Fills a chart's canvas with the panel colour first: a PNG export is then readable as drawn.
const canvasBackground = {
  id: 'canvasBackground',
  beforeDraw(chart) {
    const { ctx } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = cssVar('--panel');
    ctx.fillRect(0, 0, chart.width, chart.height);
    ctx.restore();
  },
};

// ---- panels -------------------------------------------------------------------------------------

let viewGen = 0;

function setLoading(name, el, on) {
  state.loading[name] = on;
  if (!el) return;
  el.classList.toggle('loading', on);
  el.setAttribute('aria-busy', on ? 'true' : 'false');
}

// Runs one panel's load: its old content dimmed while a new view loads (not on a live
// refresh), only the newest view's answers drawn, and its error kept (and returned) so the
// next refresh can draw it again.
async function runPanel(name, el, gen, live, work) {
  if (!live) setLoading(name, el, true);
  state.busy++;
  let error = null;
  try {
    await work(() => gen === viewGen);
    if (gen === viewGen) delete state.panelErrors[name];
  } catch (e) {
    if (!(e instanceof ApiError)) console.warn(e);
    error = errorInfo(e);
    if (gen === viewGen) state.panelErrors[name] = error;
  } finally {
    state.busy--;
    if (gen === viewGen) setLoading(name, el, false);
  }
  return gen === viewGen ? error : null;
}

async function allOf(jobs) {
  const names = Object.keys(jobs);
  const values = await Promise.all(names.map((n) => jobs[n]));
  return Object.fromEntries(names.map((n, i) => [n, values[i]]));
}

// ---- namespaces and zones -----------------------------------------------------------------------

let namespacesLoad = null;

// /namespaces, once per page (a live refresh asks again): the namespace list and the names.
function loadNamespaces(again = false) {
  if (!namespacesLoad || again) {
    namespacesLoad = fetchJson('/namespaces').then((d) => {
      state.namespaces = d;
      fillNamespaces();
      return d;
    });
    namespacesLoad.catch(() => { namespacesLoad = null; });
  }
  return namespacesLoad;
}

// The namespace the view shows: the URL's, else u (as before namespaces were listed) unless
// the API lists namespaces without u: then the first of them.
function currentNs(p) {
  if (p.ns) return p.ns;
  const list = state.namespaces ? state.namespaces.namespaces : [];
  return list.length && !list.includes('u') ? list[0] : 'u';
}

function fillNamespaces() {
  const select = $('ns');
  const p = state.params;
  const list = state.namespaces ? [...state.namespaces.namespaces] : [];
  const ns = currentNs(p);
  if (!list.includes(ns)) list.push(ns);
  select.innerHTML = '';
  for (const n of list) {
    const o = document.createElement('option');
    o.value = n;
    o.textContent = displayName(n) !== n ? `${displayName(n)} (${n})` : n;
    select.append(o);
  }
  select.value = ns;
}

// The zones the API takes (GET /timezones, the rule it accepts zones by) that this browser
// can show times in, after UTC and the integer offsets.
async function loadZones() {
  const d = await fetchJson('/timezones');
  const offsets = [];
  for (let h = d.min_offset; h <= d.max_offset; h++) if (h !== 0) offsets.push(h > 0 ? `+${h}` : String(h));
  const zones = d.zones.filter((z) => z !== 'UTC' && T.zoneKnown(z));
  state.zones = ['UTC', ...offsets, ...zones];
  $('tz-list').innerHTML = state.zones.map((z) => `<option value="${escapeHtml(z)}">`).join('');
}

// ---- key suggestions (an ARIA combobox) ---------------------------------------------------------

let suggestTimer = 0;
let suggestSeq = 0;
let activeSuggestion = -1;

function scheduleSuggest() {
  clearTimeout(suggestTimer);
  suggestTimer = setTimeout(suggest, 120);
}

async function suggest() {
  const seq = ++suggestSeq;
  const ns = $('ns').value;
  if (!ns) return;
  state.busy++;
  try {
    const data = await fetchJson('/keys', { ns, prefix: $('key').value, limit: 20 });
    if (seq !== suggestSeq) return;
    state.suggestions = data.keys;
    renderSuggestions(data);
  } catch (e) {
    if (seq === suggestSeq) showError(errorInfo(e));
  } finally {
    state.busy--;
  }
}

function renderSuggestions(data) {
  const list = $('suggestions');
  list.innerHTML = '';
  activeSuggestion = -1;
  $('key').removeAttribute('aria-activedescendant');
  data.keys.forEach((k, i) => {
    const li = document.createElement('li');
    li.id = `suggestion-${i}`;
    li.setAttribute('role', 'option');
    li.setAttribute('aria-selected', 'false');
    li.dataset.key = k.key;
    li.dataset.stored = k.stored;
    li.textContent = k.key;
    if (k.stored !== k.key) {
      const s = document.createElement('span');
      s.className = 'stored';
      s.textContent = k.exact ? `exact · ${k.stored}` : k.stored;
      li.append(s);
    }
    li.addEventListener('mousedown', (ev) => {
      ev.preventDefault();
      chooseKey(k.key);
    });
    list.append(li);
  });
  if (data.more) {
    const li = document.createElement('li');
    li.className = 'more';
    li.setAttribute('aria-disabled', 'true');
    li.textContent = '… more: type more letters';
    list.append(li);
  }
  setSuggestionsOpen(data.keys.length > 0 && document.activeElement === $('key'));
}

function setSuggestionsOpen(open) {
  $('suggestions').hidden = !open;
  $('key').setAttribute('aria-expanded', open ? 'true' : 'false');
}

function chooseKey(key) {
  $('key').value = key;
  setSuggestionsOpen(false);
  apply();
}

function onKeyNav(ev) {
  const items = [...$('suggestions').querySelectorAll('li[data-key]')];
  if ((ev.key === 'ArrowDown' || ev.key === 'ArrowUp') && items.length) {
    ev.preventDefault();
    setSuggestionsOpen(true);
    activeSuggestion = (activeSuggestion + (ev.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
    items.forEach((li, i) => {
      li.classList.toggle('active', i === activeSuggestion);
      li.setAttribute('aria-selected', i === activeSuggestion ? 'true' : 'false');
    });
    $('key').setAttribute('aria-activedescendant', items[activeSuggestion].id);
  } else if (ev.key === 'Enter' && activeSuggestion >= 0 && items[activeSuggestion]) {
    ev.preventDefault();
    chooseKey(items[activeSuggestion].dataset.key);
  } else if (ev.key === 'Escape') {
    setSuggestionsOpen(false);
  }
}

async function suggestCompare() {
  const ns = $('ns').value;
  if (!ns) return;
  try {
    const data = await fetchJson('/keys', { ns, prefix: $('cmp').value, limit: 20 });
    $('cmp-list').innerHTML = data.keys.map((k) => `<option value="${escapeHtml(k.key)}">`).join('');
  } catch (e) {
    showError(errorInfo(e));
  }
}

// ---- series ---------------------------------------------------------------------------------------

let seriesChart = null;
let seriesModel = null;  // what the chart shows, with the counts as answered (the CSV's)

async function loadSeriesPanel(p, r, gen, live, rangeTotal) {
  return runPanel('series', $('series-section'), gen, live, async (current) => {
    const q = { ns: p.ns, key: p.key, ...rangeQuery(r, p) };
    const started = performance.now();
    const jobs = {
      names: loadNamespaces().catch(() => null),  // the display names the title and legend use
      main: fetchJson('/series', q),
      total: rangeTotal,
      // All time means up to now, whatever the range's reference.
      allTime: fetchJson('/series', { ns: p.ns, key: p.key, unit: 'month', units: -1, rollup: 'true' }),
    };
    if (p.cmp) {
      jobs.cmp = fetchJson('/series', { ...q, key: p.cmp });
      jobs.cmpTotal = fetchJson('/series', { ...q, key: p.cmp, rollup: 'true' });
    }
    const a = await allOf(jobs);
    if (p.prev === '1' && current()) {
      const oldest = a.main.series.length ? a.main.series[a.main.series.length - 1].dt : r.start;
      a.prev = await fetchJson('/series', { ns: p.ns, key: p.key, ...previousQuery(r, p, oldest) });
    }
    if (!current()) return;
    const seq = ++renderSeq;
    performance.mark(`series-answered-${seq}`);
    drawSeries(p, r, a);
    performance.mark(`series-rendered-${seq}`);
    const m = performance.measure(state.renders === 1 ? 'first-series-render' : 'series-render',
      `series-answered-${seq}`, `series-rendered-${seq}`);
    state.timings = { api_ms: performance.now() - started - m.duration, render_ms: m.duration };
  });
}
let renderSeq = 0;

function clearSeries() {
  state.series = null;
  state.compare = null;
  state.previous = null;
  state.totals = null;
  seriesModel = null;
  $('series-section').hidden = true;
}

// The answers as what the chart shows: oldest first, labels in the zone, partial buckets.
function seriesModelOf(p, r, a) {
  const tz = T.zoneKnown(p.tz || 'UTC') ? p.tz || 'UTC' : 'UTC';
  const oldestFirst = [...a.main.series].reverse();
  const dts = oldestFirst.map((b) => b.dt);
  if (r.kind === 'count') {
    r.start = dts.length ? dts[0] : r.start;
    r.unit = a.main.unit;
  }
  const m = {
    p, r, tz, unit: a.main.unit, main: a.main, dts,
    labels: dts.map((dt) => T.bucketLabel(dt, a.main.unit, tz)),
    counts: oldestFirst.map((b) => b.value),
    partial: new Set(a.main.partial || []),
    total: a.total.total, allTime: a.allTime.total,
    cmp: a.cmp ? [...a.cmp.series].reverse().map((b) => b.value) : null,
    cmpTotal: a.cmpTotal ? a.cmpTotal.total : null,
    prev: a.prev ? [...a.prev.series].reverse() : null,
  };
  m.missing = countToNumber(m.allTime) === 0 && m.counts.every((v) => countToNumber(v) === 0);
  return m;
}

function drawSeries(p, r, a) {
  const m = seriesModelOf(p, r, a);
  seriesModel = m;
  state.missing = m.missing;
  $('series-section').hidden = false;
  drawSeriesText(m);
  $('notice').hidden = !m.missing;
  $('notice').textContent = m.missing ? `No data: the key '${p.key}' has never been counted in namespace '${p.ns}'.` : '';
  $('series-box').hidden = m.missing;
  $('answer-json').textContent = JSON.stringify({ series: a.main, range_total: a.total, all_time: a.allTime,
    ...(a.cmp ? { compare: a.cmp } : {}), ...(a.prev ? { previous_period: a.prev } : {}) });
  renderSeriesChart(m);
  state.renders++;
  // What the page plotted, read back from the chart itself (the tests compare it with /series).
  const values = seriesChart.data.datasets[0].data.slice();
  state.series = {
    ns: p.ns, key: p.key, unit: m.unit, units: a.main.units, tz: p.tz, tz_offset: a.main.tz_offset,
    unit_reference_ts: a.main.unit_reference_ts, start: r.start, end: r.end,
    dts: m.dts, labels: seriesChart.data.labels.slice(), values: p.scale === 'log' ? m.counts.map(countToNumber) : values,
    partial: [...m.partial],
  };
  state.compare = m.cmp ? { key: p.cmp, dts: m.dts, values: m.cmp.map(countToNumber) } : null;
  state.previous = m.prev ? { dts: m.prev.map((b) => b.dt), values: m.prev.map((b) => countToNumber(b.value)) } : null;
  state.totals = { range: countToNumber(m.total), all_time: countToNumber(m.allTime),
    compare: m.cmpTotal === null ? null : countToNumber(m.cmpTotal) };
  if ($('series-table-box').open) fillSeriesTable();
}

function drawSeriesText(m) {
  const { p, r } = m;
  $('series-title').textContent = keyLabel(p.ns, p.key) + (p.cmp ? `  vs  ${keyLabel(p.ns, p.cmp)}` : '');
  const totals = [`in range: ${formatCount(m.total)}`];
  if (p.cmp) totals.push(`${p.cmp}: ${formatCount(m.cmpTotal)}`);
  $('totals').innerHTML = totals.map((t) => `<span>${escapeHtml(t)}</span>`).join('') +
    `<span id="total" title="every count of the key up to now, whatever the range">all-time total: ${escapeHtml(formatCount(m.allTime))}</span>`;
  const bits = [`${m.dts.length} × ${m.unit}`, `time zone ${p.tz || 'UTC'} (${T.offsetLabel(m.tz, Math.max(r.end - 1, 0))} at the end)`];
  if (m.partial.size) bits.push('dashed: partial buckets (the range holds part of them)');
  if (r.notice) bits.push(r.notice);
  $('series-meta').textContent = bits.join(' · ');
  $('series-chart').setAttribute('aria-label', `Line chart of ${keyLabel(p.ns, p.key)}: ${m.dts.length} ${m.unit} buckets ` +
    `from ${m.labels[0] || '—'} to ${m.labels[m.labels.length - 1] || '—'} (${p.tz || 'UTC'}), ${formatCount(m.total)} in all. ` +
    'The data table below holds every value.');
}

const isPartial = (m, i) => m.partial.has(m.dts[i]);

// The datasets of a model: the key, the compared key, the previous period.
function seriesDatasets(m) {
  const { p } = m;
  const log = p.scale === 'log';
  const plot = (counts) => counts.map((v) => (log && countToNumber(v) <= 0 ? null : countToNumber(v)));
  const points = m.dts.length > 60 ? 0 : 2;
  // Partial buckets: a marked point and dashed segments. Plain values when there are none
  // (a function per point or segment makes Chart.js resolve each one: docs/benchmarks.md).
  const partial = m.partial.size > 0;
  const marks = partial ? {
    pointRadius: m.dts.map((_, i) => (isPartial(m, i) ? 4 : points)),
    pointStyle: m.dts.map((_, i) => (isPartial(m, i) ? 'rectRot' : 'circle')),
    segment: { borderDash: (ctx) => (isPartial(m, ctx.p0DataIndex) || isPartial(m, ctx.p1DataIndex) ? [6, 4] : undefined) },
  } : { pointRadius: points };
  const c = [cssVar('--series-0'), cssVar('--series-1'), cssVar('--series-2')];
  const sets = [{ label: keyLabel(p.ns, p.key), data: plot(m.counts), exact: m.counts, borderColor: c[0],
    backgroundColor: `${c[0]}33`, fill: !log, ...marks, tension: 0, yAxisID: 'y' }];
  if (m.cmp) {
    sets.push({ label: keyLabel(p.ns, p.cmp), data: plot(m.cmp), exact: m.cmp, borderColor: c[1], backgroundColor: `${c[1]}33`,
      fill: false, ...marks, tension: 0, yAxisID: p.axis === 'right' ? 'y2' : 'y' });
  }
  if (m.prev) {
    const prev = m.dts.map((_, i) => (m.prev[i] ? m.prev[i].value : null));
    sets.push({ label: 'previous period', data: prev.map((v) => (v === null ? null : plot([v])[0])), exact: prev, borderColor: c[2],
      backgroundColor: 'transparent', borderDash: [3, 3], fill: false, pointRadius: 0, tension: 0, yAxisID: 'y' });
  }
  return sets;
}

// Ticks that fit the chart's width: fewer and shorter labels on a narrow screen.
function xTicks(m, width) {
  const narrow = width < 560;
  return {
    maxTicksLimit: Math.max(2, Math.min(12, Math.floor(width / (narrow ? 90 : 120)))), maxRotation: 0, autoSkip: true,
    autoSkipPadding: 12,
    callback(v) {
      const l = this.getLabelForValue(v);
      return narrow && m.unit !== 'month' ? l.slice(5) : l;  // "11-01 01:00", "11-01"
    },
  };
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact' });

function seriesOptions(m) {
  const width = $('series-box').clientWidth || 600;
  const yTicks = { callback: (v) => (width < 560 ? compact.format(v) : formatCount(v)) };
  const y = m.p.scale === 'log' ? { type: 'logarithmic', ticks: yTicks } : { beginAtZero: true, ticks: yTicks };
  const scales = { x: { ticks: xTicks(m, width) }, y };
  if (m.cmp && m.p.axis === 'right') {
    scales.y2 = { position: 'right', beginAtZero: m.p.scale !== 'log', type: m.p.scale === 'log' ? 'logarithmic' : 'linear',
      grid: { drawOnChartArea: false }, ticks: yTicks };
  }
  return {
    animation: false, responsive: true, maintainAspectRatio: false, normalized: true,
    interaction: { mode: 'index', intersect: false }, scales,
    plugins: { legend: { display: true }, tooltip: { callbacks: { title: (items) => tooltipTitle(items[0].dataIndex),
      label: (item) => tooltipLabel(item) } } },
  };
}

// The tooltip's title of bucket i: its start with the zone's name and offset (the two 01:00s
// of a fall-back read apart), and whether the range holds only part of it.
function tooltipTitle(i) {
  const m = seriesModel;
  if (!m || i < 0 || i >= m.dts.length) return '';
  return `${T.instantLabel(m.dts[i], m.tz)}${isPartial(m, i) ? ' — partial bucket' : ''}`;
}
window.dashboardTooltip = tooltipTitle;

// A dataset's count at a bucket, exactly as answered (a BigInt past 2^53 too).
function tooltipLabel(item) {
  const m = seriesModel;
  const i = item.dataIndex;
  if (item.dataset.label === 'previous period' && m && m.prev && m.prev[i]) {
    return `previous period (${T.bucketLabel(m.prev[i].dt, m.unit, m.tz)}): ${formatCount(m.prev[i].value)}`;
  }
  return `${item.dataset.label}: ${formatCount(item.dataset.exact[i])}`;
}

function renderSeriesChart(m) {
  const datasets = seriesDatasets(m);
  const options = seriesOptions(m);
  const shape = `${m.p.scale}|${m.p.axis}|${datasets.length}|${state.theme}`;
  if (seriesChart && seriesChart.$shape === shape) {
    seriesChart.data.labels = m.labels;
    seriesChart.data.datasets = datasets;
    seriesChart.options = options;
    seriesChart.update('none');
    return;
  }
  if (seriesChart) seriesChart.destroy();
  seriesChart = new Chart($('series-chart'), { type: 'line', data: { labels: m.labels, datasets }, options,
    plugins: [canvasBackground] });
  seriesChart.$shape = shape;
}

function fillSeriesTable() {
  const m = seriesModel;
  const table = $('series-table');
  if (!m) {
    table.innerHTML = '';
    return;
  }
  const head = [`bucket start (${m.p.tz || 'UTC'})`, m.p.key, ...(m.cmp ? [m.p.cmp] : []), ...(m.prev ? ['previous period'] : [])];
  const rows = m.dts.map((dt, i) => {
    const cells = [m.labels[i] + (isPartial(m, i) ? ' (partial)' : ''), formatCount(m.counts[i])];
    if (m.cmp) cells.push(formatCount(m.cmp[i]));
    if (m.prev) cells.push(m.prev[i] ? formatCount(m.prev[i].value) : '');
    return `<tr${isPartial(m, i) ? ' class="partial"' : ''}>${cells.map((c, j) => `<td${j ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`;
  });
  table.innerHTML = `<caption>${escapeHtml($('series-title').textContent)}</caption><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody>`;
}

// ---- breakdowns ---------------------------------------------------------------------------------

const breakdownCharts = new Map();  // sub -> chart
let breakdownModel = null;

// Draws each bar's count and share at its end.
const valueLabels = {
  id: 'valueLabels',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    const texts = chart.$valueTexts || [];
    ctx.save();
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = cssVar('--fg');
    ctx.textBaseline = 'middle';
    chart.getDatasetMeta(0).data.forEach((bar, i) => ctx.fillText(texts[i] || '', bar.x + 4, bar.y));
    ctx.restore();
  },
};

async function loadBreakdownPanel(p, r, gen, live, rangeTotal) {
  return runPanel('breakdowns', $('breakdowns'), gen, live, async (current) => {
    const q = { ns: p.ns, key: p.key, ...rangeQuery(r, p) };
    const [sub, total] = await Promise.all([fetchJson('/subtotals', q), rangeTotal, loadNamespaces().catch(() => null)]);
    if (!current()) return;
    const answers = await Promise.all(sub.subtotals.map((s) => fetchJson('/breakdown', { ...q, sub: s, limit: p.blimit || DEFAULTS.blimit })));
    if (!current()) return;
    state.subtotals = sub.subtotals;
    drawBreakdowns(p, sub.subtotals, answers, total.total);
  });
}

function clearBreakdowns(message) {
  for (const c of breakdownCharts.values()) c.destroy();
  breakdownCharts.clear();
  breakdownModel = null;
  state.breakdowns = {};
  state.subtotals = [];
  $('breakdowns').innerHTML = message ? `<div class="breakdown panel-error" role="alert">${escapeHtml(message)}</div>` : '';
}

function drawBreakdowns(p, subs, answers, total) {
  clearBreakdowns();
  state.subtotals = subs;
  breakdownModel = { p, total, subs: {} };
  const box = $('breakdowns');
  if (subs.length === 0) {
    box.innerHTML = '<div class="breakdown"><span class="empty">No subtotals for this key in this range.</span></div>';
    return;
  }
  subs.forEach((s, i) => {
    const rows = answers[i].breakdown.map((e) => ({ subkey: e.subkey, value: e.value, name: subkeyName(s, e.subkey) }));
    breakdownModel.subs[s] = rows;
    const card = breakdownCard(s, rows, total);
    box.append(card);
    // Drawn once the card is in the page, so its width is known.
    const canvas = card.querySelector('canvas');
    if (canvas) drawBreakdownChart(s, canvas, rows, total, i);
    state.breakdowns[s] = rows.map((e) => ({ subkey: e.subkey, value: countToNumber(e.value), share: shareText(e.value, total),
      ...(e.name ? { name: e.name } : {}) }));
  });
}

function breakdownCard(s, rows, total) {
  const div = document.createElement('div');
  div.className = 'breakdown';
  div.dataset.sub = s;
  const title = `Top ${rows.length} by ${displayName(s)}`;
  div.innerHTML = `<h3><span>${escapeHtml(title)}</span><span class="panel-tools">` +
    `<button type="button" class="csv" data-export="breakdown" data-sub="${escapeHtml(s)}">CSV</button>` +
    `<button type="button" class="png" data-export="breakdown" data-sub="${escapeHtml(s)}">PNG</button></span></h3>`;
  if (rows.length === 0) {
    div.insertAdjacentHTML('beforeend', '<span class="empty">No data in this range.</span>');
    return div;
  }
  const bars = document.createElement('div');
  bars.className = 'bars';
  bars.style.height = `${40 + rows.length * 24}px`;
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `Bar chart: ${title}, ${rows.map((e) => `${labelOf(e)} ${formatCount(e.value)}`).join(', ')}. The data table below holds every value and share.`);
  bars.append(canvas);
  div.append(bars);
  div.insertAdjacentHTML('beforeend', `<details><summary>data table</summary><div class="table-wrap">${breakdownTable(s, rows, total)}</div></details>`);
  return div;
}

const labelOf = (e) => (e.name ? `${e.name} (${e.subkey})` : e.subkey);

function breakdownTable(s, rows, total) {
  const body = rows.map((e, j) => `<tr><td class="num">${j + 1}</td><td>${escapeHtml(labelOf(e))}</td>` +
    `<td class="num">${formatCount(e.value)}</td><td class="num">${formatShare(e.value, total)}</td></tr>`).join('');
  return `<table><caption>${escapeHtml(displayName(s))}: count and share of the key's ${formatCount(total)} in the range</caption>` +
    `<thead><tr><th>#</th><th>${escapeHtml(displayName(s))}</th><th class="num">count</th><th class="num">share</th></tr></thead><tbody>${body}</tbody></table>`;
}

function drawBreakdownChart(s, canvas, rows, total, i) {
  const colors = [cssVar('--series-0'), cssVar('--series-1')];
  const chart = new Chart(canvas, {
    type: 'bar',
    data: { labels: rows.map(labelOf), datasets: [{ label: displayName(s), data: rows.map((e) => countToNumber(e.value)),
      exact: rows.map((e) => e.value), backgroundColor: colors[i % 2] }] },
    options: {
      indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,
      layout: { padding: { right: 96 } },
      scales: {
        y: { ticks: { autoSkip: false, callback(v) { const l = this.getLabelForValue(v); return l.length > 32 ? `${l.slice(0, 31)}…` : l; } } },
        x: { beginAtZero: true, ticks: { maxTicksLimit: 4, callback: (v) => compact.format(v) } },
      },
      plugins: { legend: { display: false },
        tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${formatCount(item.dataset.exact[item.dataIndex])}`,
          afterLabel: (item) => `${formatShare(item.dataset.exact[item.dataIndex], total)} of the key's range total` } } },
    },
    plugins: [valueLabels, canvasBackground],
  });
  chart.$valueTexts = rows.map((e) => `${formatCount(e.value)} · ${formatShare(e.value, total)}`);
  chart.update('none');
  breakdownCharts.set(s, chart);
}

// ---- the landing page ---------------------------------------------------------------------------

async function loadLanding(p, r, gen, live) {
  return runPanel('leaderboard', $('landing'), gen, live, async (current) => {
    await loadNamespaces(live);
    if (!current()) return;
    const ns = currentNs(p);
    const data = await fetchJson('/leaderboard', { ns, ...rangeQuery(r, p), limit: p.blimit || DEFAULTS.blimit });
    if (!current()) return;
    drawLeaderboard(p, r, ns, data);
  });
}

function drawLeaderboard(p, r, ns, data) {
  $('landing').hidden = false;
  const chips = $('landing-namespaces');
  chips.innerHTML = '';
  for (const n of state.namespaces.namespaces) {
    const b = document.createElement('button');
    b.type = 'button';
    b.dataset.ns = n;
    b.textContent = displayName(n) !== n ? `${displayName(n)} (${n})` : n;
    b.setAttribute('aria-pressed', n === ns ? 'true' : 'false');
    b.addEventListener('click', () => navigate({ ...state.params, ns: n, key: '' }));
    chips.append(b);
  }
  $('landing-title').textContent = state.namespaces.namespaces.length ? `Top keys of ${displayName(ns)}` : 'No data yet';
  $('leaderboard-caption').textContent = `${rangeText(r, p)} · ${formatCount(data.total)} in all`;
  const top = data.leaderboard.length ? countToNumber(data.leaderboard[0].value) : 0;
  $('leaderboard').tBodies[0].innerHTML = data.leaderboard.map((e, i) => `<tr><td class="num">${i + 1}</td>` +
    `<td><a href="${escapeHtml(searchOf({ ...p, ns, key: e.key }) || '?')}" data-key="${escapeHtml(e.key)}">${escapeHtml(e.key)}</a></td>` +
    `<td class="num">${formatCount(e.value)}</td><td class="num">${formatShare(e.value, data.total)}</td>` +
    `<td class="bar-cell"><span class="share-bar" style="width:${top ? (100 * countToNumber(e.value)) / top : 0}%"></span></td></tr>`).join('');
  leaderboardAnswer = data;
  state.leaderboard = { ns, total: countToNumber(data.total), entries: data.leaderboard.map((e) => ({ key: e.key, value: countToNumber(e.value) })) };
}
let leaderboardAnswer = null;  // the counts as answered (the CSV's)

// ---- cluster health and the cluster view --------------------------------------------------------

async function clusterAndStats() {
  const cluster = await fetchJson('/cluster');
  let stats = null;
  try {
    stats = await fetchJson('/stats');
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e;  // stats-secret: shown without it
  }
  return { cluster, stats };
}

async function loadHealth(gen, live) {
  return runPanel('health', null, gen, live, async (current) => {
    const { cluster, stats } = await clusterAndStats();
    if (current()) drawHealth(cluster, stats);
  });
}

function drawHealth(cluster, stats) {
  const rt = cluster.realtime;
  const replicas = cluster.archive.flatMap((s) => s.replicas);
  const up = replicas.filter((x) => x.up);
  const days = [...new Set(up.map((x) => x.stats.last_day).filter(Boolean))].sort();
  const h = {
    realtime_up: rt.filter((x) => x.up).length, realtime: rt.length,
    archive_up: up.length, archive: replicas.length,
    last_day: days.length ? days[0] : null,
    shards_down: cluster.archive.filter((s) => !s.replicas.some((x) => x.up)).length,
    backlog: stats ? stats.backlog_records : null,
  };
  state.health = h;
  const item = (ok, text) => `<span class="${ok ? 'ok' : 'bad'}">${escapeHtml(text)}</span>`;
  $('health').innerHTML = [
    item(h.realtime_up === h.realtime, `realtime ${h.realtime_up}/${h.realtime} up`),
    item(h.archive_up === h.archive, `archive ${h.archive_up}/${h.archive} replicas up`),
    item(h.last_day !== null && h.shards_down === 0, h.last_day ? `archive through ${h.last_day}` : 'no archive day'),
    ...(h.backlog === null ? [] : [item(h.backlog < 100000, `oplog backlog ${formatCount(h.backlog)}`)]),
  ].join('');
  $('health').hidden = false;
}

let lastApiSample = null;

const cell = (text, cls) => `<td${cls ? ` class="${cls}"` : ''}>${escapeHtml(String(text ?? ''))}</td>`;
function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
const upCell = (up) => cell(up ? 'up' : 'down', up ? 'up' : 'down');

async function loadCluster(gen, live) {
  return runPanel('cluster', $('cluster'), gen, live, async (current) => {
    const { cluster, stats } = await clusterAndStats();
    if (!current()) return;
    drawHealth(cluster, stats);
    drawCluster(cluster, stats || {});
  });
}

function drawCluster(cluster, stats) {
  const view = { realtime: [], archive: [], api: [] };
  $('realtime-table').tBodies[0].innerHTML = cluster.realtime.map((s) => realtimeRow(s, stats, view)).join('');
  const ar = [];
  for (const shard of cluster.archive) {
    for (const r of shard.replicas) {
      const d = r.stats || {};
      const get = (d.requests || {})['/get'] || {};
      view.archive.push({ shard: shard.shard, replica: r.replica, address: r.address, up: r.up, generation: d.generation, last_day: d.last_day });
      ar.push(`<tr data-tier="archive" data-shard="${shard.shard}" data-replica="${r.replica}" data-up="${r.up}">` +
        `${cell(shard.shard)}${cell(r.replica)}${cell(r.address)}${upCell(r.up)}${cell(d.generation ?? '—')}${cell(d.last_day ?? '—')}` +
        `${cell(d.records ?? '')}${cell(get.count !== undefined ? `${get.p50_us} / ${get.p99_us}` : '—')}${cell(r.up ? '' : r.error)}</tr>`);
    }
  }
  $('archive-table').tBodies[0].innerHTML = ar.join('');
  $('api-table').tBodies[0].innerHTML = apiRows(stats, view).join('');
  $('cluster-meta').textContent = stats.node_id ? `API ${stats.node_id} up ${Math.round(stats.uptime_seconds)} s · ` +
    `oplog backlog ${stats.backlog_records} records · delivered ${stats.delivered_records}` : 'the API\'s /stats needs the cluster secret';
  state.cluster = view;
}

function realtimeRow(s, stats, view) {
  const d = s.stats || {};
  const sender = (stats.realtime || [])[s.shard] || {};
  const lag = sender.delivery_lag_ms || {};
  const slots = (d.slots || []).map((x) => `${x.day ?? '—'}: ${x.state}`).join(', ');
  view.realtime.push({ shard: s.shard, address: s.address, up: s.up, backlog_records: sender.backlog_records, delivery_lag_p99_ms: lag.p99 });
  return `<tr data-tier="realtime" data-shard="${s.shard}" data-up="${s.up}">${cell(s.shard)}${cell(s.address)}${upCell(s.up)}` +
    `${cell(s.up ? slots : s.error)}${cell(d.closed_through ?? '—')}${cell(sender.backlog_records)}${cell(sender.backlog_seconds)}` +
    `${cell(lag.p50 !== undefined ? `${lag.p50} / ${lag.p99}` : '—')}${cell(sender.last_error || '')}</tr>`;
}

function apiRows(stats, view) {
  const now = performance.now();
  const latency = stats.latency_us || {};
  const rows = Object.entries(latency).map(([path, l]) => {
    let rate = '—';
    if (lastApiSample && lastApiSample.latency[path] && now > lastApiSample.at) {
      rate = ((l.count - lastApiSample.latency[path].count) / ((now - lastApiSample.at) / 1000)).toFixed(1);
    } else if (stats.uptime_seconds > 0) {
      rate = (l.count / stats.uptime_seconds).toFixed(1);
    }
    view.api.push({ path, count: l.count, rate: Number(rate), p99_us: l.p99_us });
    return `<tr>${cell(path)}${cell(l.count)}${cell(rate)}${cell(l.p50_us)}${cell(l.p99_us)}${cell(l.p999_us)}${cell(l.max_us)}</tr>`;
  });
  lastApiSample = { at: now, latency };
  return rows;
}

// ---- a view: every panel, loaded or refreshed ---------------------------------------------------

// "2026-10-30 00:00 → 2026-11-28 10:15 (UTC-5) · 30 × day": a range as the page reads it.
function rangeText(r, p) {
  const tz = T.zoneKnown(p.tz || 'UTC') ? p.tz || 'UTC' : 'UTC';
  if (r.start === null) return `the last ${r.units} × ${r.unit}`;
  const f = (t) => T.bucketLabel(t, 'hour', tz);
  return `${f(r.start)} → ${f(r.end)} (${T.offsetLabel(tz, r.end - 1)}) · by ${r.unit}`;
}

// Loads every panel of the view (a new view, or a live refresh of the one shown): each on its
// own, so one that fails shows its error and the others still draw, and the next refresh
// draws it again.
async function refreshView({ live = false } = {}) {
  const gen = live ? viewGen : ++viewGen;
  const p = state.params;
  const jobs = [loadHealth(gen, live)];
  if (state.view === 'cluster') {
    jobs.push(loadCluster(gen, live));
  } else {
    let r;
    try {
      r = rangeOf(p);
    } catch (e) {
      showError({ status: 0, status_txt: 'INVALID_RANGE', message: e.message });
      clearSeries();
      clearBreakdowns();
      state.loads++;
      return;
    }
    state.range = { kind: r.kind, start: r.start, end: r.end, unit: r.unit, preset: r.preset || null, notice: r.notice || null };
    drawRangeBar(p, r);
    jobs.push(...explorePanels(p, r, gen, live));
  }
  const errors = await Promise.all(jobs);
  if (gen !== viewGen) return;
  afterRefresh(errors);
}

function explorePanels(params, r, gen, live) {
  $('landing').hidden = !!params.key;
  if (!params.key) {
    clearSeries();
    clearBreakdowns();
    return [loadLanding(params, r, gen, live)];
  }
  const p = { ...params, ns: currentNs(params) };
  state.leaderboard = null;
  if (!seriesModel) $('series-section').hidden = false;  // shown at once, marked as loading
  // One range total for both panels: the series' total and the breakdowns' shares.
  const rangeTotal = fetchJson('/series', { ns: p.ns, key: p.key, ...rangeQuery(r, p), rollup: 'true' });
  rangeTotal.catch(() => {});  // each panel reports it
  if (live) loadNamespaces(true).catch(() => {});  // a namespace may have appeared
  return [loadSeriesPanel(p, r, gen, live, rangeTotal), loadBreakdownPanel(p, r, gen, live, rangeTotal)];
}

function afterRefresh(errors) {
  const first = errors.find(Boolean) || null;
  showError(first);
  if (state.panelErrors.series) clearSeries();
  if (state.panelErrors.breakdowns) clearBreakdowns(`${state.panelErrors.breakdowns.status_txt}: ${state.panelErrors.breakdowns.message}`);
  if (state.panelErrors.leaderboard) $('leaderboard').tBodies[0].innerHTML = '';
  state.loads++;
  state.lastUpdated = Date.now();
  $('updated').textContent = `updated ${new Date(state.lastUpdated).toLocaleTimeString('en-GB')}`;
}

function drawRangeBar(p, r) {
  for (const b of $('presets').querySelectorAll('button')) {
    b.setAttribute('aria-pressed', r.kind === 'preset' && r.preset === b.dataset.preset ? 'true' : 'false');
  }
  const tz = T.zoneKnown(p.tz || 'UTC') ? p.tz || 'UTC' : 'UTC';
  $('from').placeholder = r.start === null ? 'YYYY-MM-DD' : T.bucketLabel(r.start, 'hour', tz).replace(' 00:00', '');
  $('to').placeholder = r.start === null ? 'YYYY-MM-DD' : T.bucketLabel(r.end, 'hour', tz).replace(' 00:00', '');
  $('range-text').textContent = rangeText(r, p);
  $('ref-chip').hidden = !p.ref;
  $('ref-text').textContent = p.ref ? `ends at ${T.instantLabel(Number(p.ref), tz)}` : '';
}

function redrawCharts() {
  if (seriesModel) renderSeriesChart(seriesModel);
  if (breakdownModel) {
    const { p, subs, total } = breakdownModel;
    drawBreakdowns(p, Object.keys(subs), Object.keys(subs).map((s) => ({ breakdown: subs[s] })), total);
  }
}

// ---- export -------------------------------------------------------------------------------------

const csvField = (v) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
const csvOf = (rows) => rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';

// The series shown, oldest first: each bucket's start (local, with its offset) and unix
// seconds, the counts as the API answered them, and whether it is partial.
function seriesCsv() {
  const m = seriesModel;
  const head = ['bucket_start', 'dt', m.p.key, ...(m.cmp ? [m.p.cmp] : []), ...(m.prev ? ['previous_period'] : []), 'partial'];
  const rows = m.dts.map((dt, i) => [T.isoLocal(dt, m.tz), dt, countText(m.counts[i]), ...(m.cmp ? [countText(m.cmp[i])] : []),
    ...(m.prev ? [m.prev[i] ? countText(m.prev[i].value) : ''] : []), isPartial(m, i) ? 'yes' : 'no']);
  return csvOf([head, ...rows]);
}

function breakdownCsv(sub) {
  const { total, subs } = breakdownModel;
  return csvOf([['rank', 'subkey', 'name', 'count', 'share_percent'],
    ...subs[sub].map((e, i) => [i + 1, e.subkey, e.name || '', countText(e.value), shareText(e.value, total)])]);
}

function leaderboardCsv() {
  const d = leaderboardAnswer;
  return csvOf([['rank', 'key', 'count', 'share_percent'],
    ...d.leaderboard.map((e, i) => [i + 1, e.key, countText(e.value), shareText(e.value, d.total)])]);
}

function download(name, href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  state.lastExport = { name, text: text ?? null, href: text === undefined ? href : null };
}

function fileStem() {
  const p = state.params;
  return ['clickatron', p.ns || currentNs(p), p.key].filter(Boolean).join('-').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 80);
}

function exportCsv(what, sub) {
  const text = what === 'series' ? seriesCsv() : what === 'breakdown' ? breakdownCsv(sub) : leaderboardCsv();
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  download(`${fileStem()}-${what === 'breakdown' ? `top-${sub}` : what}.csv`, url, text);
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function exportPng(what, sub) {
  const chart = what === 'series' ? seriesChart : breakdownCharts.get(sub);
  if (!chart) return;
  download(`${fileStem()}-${what === 'breakdown' ? `top-${sub}` : 'series'}.png`, chart.toBase64Image('image/png'));
}

function onExport(ev) {
  const b = ev.target.closest('button[data-export]');
  if (!b) return;
  if (b.classList.contains('png')) exportPng(b.dataset.export, b.dataset.sub);
  else exportCsv(b.dataset.export, b.dataset.sub);
}

// ---- drag to zoom -------------------------------------------------------------------------------

let drag = null;

function bucketAt(x) {
  const n = seriesModel.dts.length;
  const v = Math.round(seriesChart.scales.x.getValueForPixel(x));
  return Math.max(0, Math.min(n - 1, v));
}

function onZoomStart(ev) {
  if (!seriesChart || !seriesModel || ev.button !== 0) return;
  const area = seriesChart.chartArea;
  if (ev.offsetX < area.left || ev.offsetX > area.right) return;
  drag = { x0: ev.offsetX, x1: ev.offsetX };
  $('series-chart').setPointerCapture?.(ev.pointerId);
  drawZoomBox();
}

function onZoomMove(ev) {
  if (!drag) return;
  const area = seriesChart.chartArea;
  drag.x1 = Math.max(area.left, Math.min(area.right, ev.offsetX));
  drawZoomBox();
}

function drawZoomBox() {
  const box = $('zoom-box');
  box.hidden = !drag || Math.abs(drag.x1 - drag.x0) < 4;
  if (!drag) return;
  box.style.left = `${Math.min(drag.x0, drag.x1)}px`;
  box.style.width = `${Math.abs(drag.x1 - drag.x0)}px`;
}

// A drag across buckets i..j makes their range the view's: from the start of i to the end of j.
function onZoomEnd() {
  if (!drag) return;
  const d = drag;
  drag = null;
  drawZoomBox();
  if (Math.abs(d.x1 - d.x0) < 8) return;
  const m = seriesModel;
  const i = bucketAt(Math.min(d.x0, d.x1));
  const j = bucketAt(Math.max(d.x0, d.x1));
  const start = m.dts[i];
  const end = j + 1 < m.dts.length ? m.dts[j + 1] : m.r.end;
  zoomTo(start, end);
}

function zoomTo(start, end) {
  const p = state.params;
  const tz = p.tz || 'UTC';
  const next = { ...p, range: DEFAULTS.range, units: '', from: T.formatBound(start, tz, false), to: T.formatBound(end, tz, true) };
  if (p.unit && T.unitFor(start, end, p.unit) !== p.unit) next.unit = '';
  zoomStack.push(searchOf(p));
  navigate(next);
}
const zoomStack = [];

// ---- live refresh, navigation -------------------------------------------------------------------

let liveTimer = 0;

function setLive(p) {
  clearInterval(liveTimer);
  liveTimer = 0;
  $('live').value = p.live;
  if (!LIVE_MS[p.live]) return;
  liveTimer = setInterval(() => {
    if (state.busy > 0) return;  // one refresh at a time
    refreshView({ live: true });
  }, LIVE_MS[p.live]);
}

function fillForm(p) {
  for (const k of ['key', 'cmp', 'blimit', 'from', 'to', 'unit', 'tz']) $(k).value = p[k] || (k === 'tz' ? 'UTC' : k === 'blimit' ? DEFAULTS.blimit : '');
  $('prev').checked = p.prev === '1';
  $('scale').checked = p.scale === 'log';
  $('axis').checked = p.axis === 'right';
  $('live').value = p.live;
  fillNamespaces();
}

function formParams() {
  const p = { ...state.params };
  for (const k of ['key', 'cmp', 'blimit', 'from', 'to', 'unit', 'tz']) p[k] = $(k).value.trim();
  p.ns = $('ns').value;
  if (p.from || p.to) p.units = '';
  p.prev = $('prev').checked ? '1' : '';
  p.scale = $('scale').checked ? 'log' : '';
  p.axis = $('axis').checked ? 'right' : '';
  p.live = $('live').value;
  return p;
}

function render(p) {
  state.params = p;
  state.view = p.view === 'cluster' ? 'cluster' : 'explore';
  $('explore').hidden = state.view !== 'explore';
  $('cluster').hidden = state.view !== 'cluster';
  $('nav-explore').classList.toggle('active', state.view === 'explore');
  $('nav-cluster').classList.toggle('active', state.view === 'cluster');
  $('zoom-reset').hidden = !(p.from || p.to);
  setLive(p);
  refreshView();
}

function navigate(p) {
  writeUrl(p, false);
  fillForm(p);
  render(p);
}

function apply() {
  navigate(formParams());
}

function wire() {
  $('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    setSuggestionsOpen(false);
    apply();
  });
  $('key').addEventListener('input', scheduleSuggest);
  $('key').addEventListener('focus', scheduleSuggest);
  $('key').addEventListener('keydown', onKeyNav);
  $('key').addEventListener('blur', () => setSuggestionsOpen(false));
  $('cmp').addEventListener('input', suggestCompare);
  for (const id of ['unit', 'tz', 'cmp', 'blimit', 'from', 'to', 'prev', 'scale', 'axis']) $(id).addEventListener('change', apply);
  $('ns').addEventListener('change', () => navigate({ ...formParams(), key: '', cmp: '' }));
  $('live').addEventListener('change', () => {
    const q = { ...state.params, live: $('live').value };
    writeUrl(q, false);
    state.params = q;
    setLive(q);
  });
  $('ref-clear').addEventListener('click', () => navigate({ ...formParams(), ref: '' }));
  $('zoom-reset').addEventListener('click', () => {
    const back = zoomStack.pop();
    if (back !== undefined) history.back(); else navigate({ ...formParams(), from: '', to: '' });
  });
  $('theme').addEventListener('click', toggleTheme);
  document.body.addEventListener('click', onExport);
  $('leaderboard').addEventListener('click', (ev) => {
    const a = ev.target.closest('a[data-key]');
    if (!a) return;
    ev.preventDefault();
    navigate({ ...state.params, ns: currentNs(state.params), key: a.dataset.key });
  });
  $('series-table-box').addEventListener('toggle', () => { if ($('series-table-box').open) fillSeriesTable(); });
  const canvas = $('series-chart');
  canvas.addEventListener('pointerdown', onZoomStart);
  canvas.addEventListener('pointermove', onZoomMove);
  canvas.addEventListener('pointerup', onZoomEnd);
  canvas.addEventListener('pointercancel', () => { drag = null; drawZoomBox(); });
  wireNavigation();
}

function wireNavigation() {
  for (const a of document.querySelectorAll('nav a')) {
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      navigate({ ...state.params, view: a.dataset.view });
    });
  }
  $('health').addEventListener('click', (ev) => {
    ev.preventDefault();
    navigate({ ...state.params, view: 'cluster' });
  });
  window.addEventListener('popstate', () => {
    const q = readUrl();
    fillForm(q);
    render(q);
  });
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    applyTheme(state.theme);
    redrawCharts();
  });
}

function start() {
  let theme = 'auto';
  try { theme = localStorage.getItem(THEME_KEY) || 'auto'; } catch (e) { /* no storage: auto */ }
  applyTheme(theme);
  $('presets').innerHTML = T.PRESETS.map((x) => `<button type="button" data-preset="${x.id}" aria-pressed="false">${x.label}</button>`).join('');
  $('presets').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-preset]');
    if (b) navigate({ ...formParams(), range: b.dataset.preset, from: '', to: '', units: '' });
  });
  wire();
  const p = readUrl();
  state.params = p;
  fillForm(p);
  loadZones().catch((e) => showError(errorInfo(e)));
  loadNamespaces().catch(() => { /* the landing page reports it */ });
  render(p);
  state.ready = true;
}

start();
