// The Clickatron dashboard (docs/dashboard.md): one ES module, no build step. Chart.js comes
// from Debian's libjs-chart.js, served by clickatron-api as /ui/chart.js (window.Chart).
//
// Everything shown is in window.dashboardState (the browser tests read it), and the view is
// in the URL: ?view=&ns=&key=&unit=&units=&tz=&cmp=&blimit=&live=&ref= — shareable, and
// back/forward restore it.

const Chart = window.Chart;
const $ = (id) => document.getElementById(id);

const DEFAULTS = { view: 'explore', ns: 'u', key: '', unit: 'day', units: '30', tz: 'UTC', cmp: '', blimit: '10', live: '', ref: '' };
const PARAMS = Object.keys(DEFAULTS);
const LIVE_MS = 2000;
const COLORS = ['#2364aa', '#e07a1f', '#3e9651', '#cc2529', '#6b4c9a', '#922428', '#948b3d', '#535154'];

const state = {
  view: 'explore', params: { ...DEFAULTS },
  series: null, compare: null, total: null, missing: false,
  subtotals: [], breakdowns: {}, suggestions: [],
  cluster: null, error: null, timings: {}, renders: 0, loads: 0, busy: 0,
};
window.dashboardState = state;

// ---- counts past 2^53 (docs/api.md#conventions) --------------------------------------------

// The API's counts are exact integers of up to 128 bits; JSON.parse alone rounds any past
// Number.MAX_SAFE_INTEGER. This reviver reads such a number's own text (context.source) into
// a BigInt, and a BigInt goes back into JSON as its exact digits (JSON.rawJSON), so the shown
// JSON, the total and the tooltips show every digit; charts plot plotted(v), a position.
function parseCounts(text) {
  return JSON.parse(text, (key, value, context) =>
    (typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? '')
      ? BigInt(context.source) : value));
}
BigInt.prototype.toJSON = function toJSON() { return JSON.rawJSON(this.toString()); };
const plotted = (values) => values.map(Number);
const exactLabel = (ctx) => `${ctx.dataset.label}: ${ctx.dataset.exact[ctx.dataIndex].toLocaleString('en-US')}`;

// ---- the API ------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, statusTxt, message) {
    super(message);
    this.status = status;
    this.statusTxt = statusTxt;
  }
}

// GET path?params → the envelope's data; an error envelope (or none) becomes an ApiError
// carrying the API's own status_txt and message.
async function api(path, params = {}) {
  const q = new URLSearchParams(params).toString();
  let r;
  try {
    r = await fetch(q ? `${path}?${q}` : path, { cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, 'API_UNREACHABLE', `the API did not answer ${path}: ${e.message}`);
  }
  let body = null;
  try { body = parseCounts(await r.text()); } catch (e) { /* not JSON: named below */ }
  if (!body || typeof body.status_code !== 'number') {
    throw new ApiError(r.status, `HTTP_${r.status}`, `${path} answered HTTP ${r.status} without a JSON envelope`);
  }
  if (body.status_code !== 200) throw new ApiError(body.status_code, body.status_txt, body.message || body.status_txt);
  return body.data;
}

function showError(e) {
  const box = $('error');
  if (!e) {
    state.error = null;
    box.hidden = true;
    box.textContent = '';
    return;
  }
  state.error = { status: e.status ?? 0, status_txt: e.statusTxt || 'ERROR', message: e.message };
  box.textContent = `${state.error.status_txt}: ${state.error.message}`;
  box.hidden = false;
  if (!(e instanceof ApiError)) console.warn(e);
}

// ---- URL state ----------------------------------------------------------------------------

function readUrl() {
  const q = new URLSearchParams(location.search);
  const p = {};
  for (const k of PARAMS) p[k] = q.get(k) ?? DEFAULTS[k];
  return p;
}

function writeUrl(p, replace) {
  const q = new URLSearchParams();
  for (const k of PARAMS) if (p[k] !== '' && p[k] !== DEFAULTS[k]) q.set(k, p[k]);
  const search = q.toString() ? `?${q}` : location.pathname;
  if ((q.toString() ? `?${q}` : '') === location.search) return;
  if (replace) history.replaceState(null, '', search); else history.pushState(null, '', search);
}

function formParams() {
  const p = { ...state.params };
  for (const k of ['ns', 'key', 'unit', 'units', 'tz', 'cmp', 'blimit']) p[k] = $(k).value.trim();
  p.live = $('live').checked ? '1' : '';
  return p;
}

function fillForm(p) {
  for (const k of ['ns', 'key', 'unit', 'units', 'tz', 'cmp', 'blimit']) $(k).value = p[k];
  $('live').checked = p.live === '1';
}

// ---- time zones and bucket labels ---------------------------------------------------------

const isOffset = (tz) => /^[+-]?\d{1,2}$/.test(tz);

function fillZones() {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const offsets = [];
  for (let h = -12; h <= 14; h++) offsets.push(String(h));
  $('tz-list').innerHTML = ['UTC', ...offsets, ...zones].map((z) => `<option value="${z}">`).join('');
}

const formatters = new Map();
// The bucket start dt (unix seconds) as local time in the chosen zone: an IANA name through
// the browser's zone data, an integer offset by shifting UTC.
function bucketLabel(dt, unit, tz) {
  let zone = tz || 'UTC';
  let ms = dt * 1000;
  if (isOffset(zone)) {
    ms += Number(zone) * 3600 * 1000;
    zone = 'UTC';
  }
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit',
    });
    formatters.set(zone, f);
  }
  const part = {};
  for (const { type, value } of f.formatToParts(new Date(ms))) part[type] = value;
  const day = `${part.year}-${part.month}-${part.day}`;
  if (unit === 'hour') return `${day} ${part.hour}:${part.minute}`;
  if (unit === 'month') return `${part.year}-${part.month}`;
  return day;
}

// ---- namespaces ---------------------------------------------------------------------------

// The namespaces this browser drew a series of, newest first (the API has no list of
// namespaces: any name is valid until data is counted in it).
const RECENT_NS = 'clickatron.recentNamespaces';

function recentNamespaces() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_NS) || '[]');
    return Array.isArray(list) ? list.filter((x) => typeof x === 'string') : [];
  } catch (e) {
    return [];
  }
}

function rememberNamespace(ns) {
  const list = [ns, ...recentNamespaces().filter((x) => x !== ns)].slice(0, 12);
  try { localStorage.setItem(RECENT_NS, JSON.stringify(list)); } catch (e) { /* storage refused */ }
  fillNamespaces();
}

function fillNamespaces() {
  $('ns-list').innerHTML = recentNamespaces().map((ns) => `<option value="${escapeHtml(ns)}">`).join('');
}

// ---- key suggestions ----------------------------------------------------------------------

let suggestTimer = 0;
let suggestSeq = 0;
let activeSuggestion = -1;

function scheduleSuggest() {
  clearTimeout(suggestTimer);
  suggestTimer = setTimeout(suggest, 120);
}

async function suggest() {
  const seq = ++suggestSeq;
  const ns = $('ns').value.trim();
  const prefix = $('key').value;
  if (!ns) return;
  state.busy++;
  try {
    const data = await api('/keys', { ns, prefix, limit: 20 });
    if (seq !== suggestSeq) return;
    state.suggestions = data.keys;
    showError(null);
    renderSuggestions(data);
  } catch (e) {
    if (seq === suggestSeq) showError(e);
  } finally {
    state.busy--;
  }
}

function renderSuggestions(data) {
  const list = $('suggestions');
  list.innerHTML = '';
  activeSuggestion = -1;
  for (const k of data.keys) {
    const li = document.createElement('li');
    li.setAttribute('role', 'option');
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
  }
  if (data.more) {
    const li = document.createElement('li');
    li.className = 'more';
    li.textContent = '… more: type more letters';
    list.append(li);
  }
  list.hidden = data.keys.length === 0 || document.activeElement !== $('key');
}

function chooseKey(key) {
  $('key').value = key;
  $('suggestions').hidden = true;
  apply();
}

function onKeyNav(ev) {
  const items = [...$('suggestions').querySelectorAll('li[data-key]')];
  if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
    if (!items.length) return;
    ev.preventDefault();
    activeSuggestion = (activeSuggestion + (ev.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length;
    items.forEach((li, i) => li.classList.toggle('active', i === activeSuggestion));
  } else if (ev.key === 'Enter' && activeSuggestion >= 0 && items[activeSuggestion]) {
    ev.preventDefault();
    chooseKey(items[activeSuggestion].dataset.key);
  } else if (ev.key === 'Escape') {
    $('suggestions').hidden = true;
  }
}

async function suggestCompare() {
  const ns = $('ns').value.trim();
  if (!ns) return;
  try {
    const data = await api('/keys', { ns, prefix: $('cmp').value, limit: 20 });
    $('cmp-list').innerHTML = data.keys.map((k) => `<option value="${k.key.replace(/"/g, '&quot;')}">`).join('');
  } catch (e) {
    showError(e);
  }
}

// ---- series -------------------------------------------------------------------------------

let seriesChart = null;
let loadSeq = 0;

function seriesQuery(p, key) {
  const q = { ns: p.ns, key, unit: p.unit, units: p.units || DEFAULTS.units, timezone: p.tz || 'UTC' };
  if (p.ref) q.unit_reference_ts = p.ref;
  return q;
}

async function loadSeries(p, { live = false } = {}) {
  const seq = ++loadSeq;
  state.busy++;
  try {
    const started = performance.now();
    const allTime = { ...seriesQuery(p, p.key), unit: 'month', units: -1, timezone: 'UTC', rollup: 'true' };
    const jobs = [api('/series', seriesQuery(p, p.key)), api('/series', allTime)];
    if (p.cmp) jobs.push(api('/series', seriesQuery(p, p.cmp)));
    const [main, total, cmp] = await Promise.all(jobs);
    if (seq !== loadSeq) return;
    const answered = performance.now();
    performance.mark(`series-answered-${seq}`);
    showError(null);
    drawSeries(p, main, total, cmp || null);
    performance.mark(`series-rendered-${seq}`);
    const m = performance.measure(state.renders === 1 ? 'first-series-render' : 'series-render',
      `series-answered-${seq}`, `series-rendered-${seq}`);
    state.timings = { api_ms: answered - started, render_ms: m.duration, at: Date.now() };
    state.loads++;
    if (!live) loadBreakdowns(p, seq);
  } catch (e) {
    if (seq !== loadSeq) return;
    clearSeries();
    showError(e);
    state.loads++;
  } finally {
    state.busy--;
  }
}

function clearSeries() {
  state.series = null;
  state.compare = null;
  state.total = null;
  $('series-section').hidden = true;
  $('breakdowns').innerHTML = '';
  state.breakdowns = {};
  state.subtotals = [];
}

function drawSeries(p, main, total, cmp) {
  const oldestFirst = [...main.series].reverse();
  const labels = oldestFirst.map((b) => bucketLabel(b.dt, main.unit, p.tz));
  const values = oldestFirst.map((b) => b.value);
  const datasets = [{ label: `${p.ns}|${p.key}`, data: plotted(values), exact: values, borderColor: COLORS[0], backgroundColor: COLORS[0] + '33', fill: true, pointRadius: values.length > 200 ? 0 : 2, tension: 0 }];
  if (cmp) {
    const cmpValues = [...cmp.series].reverse().map((b) => b.value);
    datasets.push({ label: `${p.ns}|${p.cmp}`, data: plotted(cmpValues), exact: cmpValues, borderColor: COLORS[1], backgroundColor: COLORS[1] + '33', fill: false, pointRadius: values.length > 200 ? 0 : 2, tension: 0 });
  }
  state.missing = total.total === 0 && values.every((v) => v === 0);
  if (!state.missing) rememberNamespace(p.ns);
  $('series-section').hidden = false;
  $('series-title').textContent = `${p.ns}|${p.key}${cmp ? `  vs  ${p.ns}|${p.cmp}` : ''}`;
  $('series-meta').textContent =
    `${main.units} × ${main.unit} · time zone ${p.tz || 'UTC'} (server tz_offset ${main.tz_offset >= 0 ? '+' : ''}${main.tz_offset} h) · ` +
    `reference ${new Date(main.unit_reference_ts * 1000).toISOString().replace('.000Z', 'Z')}`;
  $('total').textContent = `all-time total: ${total.total.toLocaleString('en-US')}`;
  const notice = $('notice');
  notice.hidden = !state.missing;
  notice.textContent = state.missing ? `No data: the key '${p.key}' has never been counted in namespace '${p.ns}'.` : '';
  $('series-chart').parentElement.hidden = state.missing;
  $('answer-json').textContent = JSON.stringify({ series: main, all_time: total, ...(cmp ? { compare: cmp } : {}) });

  if (!seriesChart) {
    seriesChart = new Chart($('series-chart'), {
      type: 'line',
      data: { labels, datasets },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, normalized: true,
        interaction: { mode: 'index', intersect: false },
        scales: { x: { ticks: { maxTicksLimit: 12, maxRotation: 0 } }, y: { beginAtZero: true } },
        plugins: { legend: { display: true }, tooltip: { callbacks: { label: exactLabel } } },
      },
    });
  } else {
    seriesChart.data.labels = labels;
    seriesChart.data.datasets = datasets;
    seriesChart.update('none');
  }
  state.renders++;
  // What the page plotted, read back from the chart itself (the tests compare it with /series).
  state.series = {
    ns: p.ns, key: p.key, unit: main.unit, units: main.units, tz: p.tz, tz_offset: main.tz_offset,
    unit_reference_ts: main.unit_reference_ts,
    dts: oldestFirst.map((b) => b.dt), labels: seriesChart.data.labels.slice(), values: seriesChart.data.datasets[0].data.slice(),
  };
  state.compare = cmp ? { key: p.cmp, dts: [...cmp.series].reverse().map((b) => b.dt), values: seriesChart.data.datasets[1].data.slice() } : null;
  state.total = total.total;
}

// ---- breakdowns ---------------------------------------------------------------------------

const breakdownCharts = [];

// Draws each bar's value at its end.
const valueLabels = {
  id: 'valueLabels',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    ctx.save();
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#1d2330';
    ctx.textBaseline = 'middle';
    chart.getDatasetMeta(0).data.forEach((bar, i) => {
      ctx.fillText(String(chart.data.datasets[0].exact[i]), bar.x + 4, bar.y);
    });
    ctx.restore();
  },
};

async function loadBreakdowns(p, seq) {
  state.busy++;
  try {
    const q = seriesQuery(p, p.key);
    const sub = await api('/subtotals', q);
    if (seq !== loadSeq) return;
    state.subtotals = sub.subtotals;
    const answers = await Promise.all(sub.subtotals.map((s) => api('/breakdown', { ...q, sub: s, limit: p.blimit || DEFAULTS.blimit })));
    if (seq !== loadSeq) return;
    drawBreakdowns(p, sub.subtotals, answers);
  } catch (e) {
    if (seq === loadSeq) showError(e);
  } finally {
    state.busy--;
  }
}

function drawBreakdowns(p, subs, answers) {
  while (breakdownCharts.length) breakdownCharts.pop().destroy();
  const box = $('breakdowns');
  box.innerHTML = '';
  state.breakdowns = {};
  if (subs.length === 0) {
    box.innerHTML = '<div class="breakdown"><span class="empty">No subtotals for this key in this range.</span></div>';
    return;
  }
  subs.forEach((s, i) => {
    const entries = answers[i].breakdown;
    const div = document.createElement('div');
    div.className = 'breakdown';
    div.dataset.sub = s;
    div.innerHTML = `<h3>top ${entries.length} by ${s}</h3>`;
    if (entries.length === 0) {
      div.insertAdjacentHTML('beforeend', '<span class="empty">No data in this range.</span>');
      box.append(div);
      state.breakdowns[s] = [];
      return;
    }
    const bars = document.createElement('div');
    bars.className = 'bars';
    bars.style.height = `${40 + entries.length * 24}px`;
    const canvas = document.createElement('canvas');
    bars.append(canvas);
    div.append(bars);
    box.append(div);
    const chart = new Chart(canvas, {
      type: 'bar',
      data: { labels: entries.map((e) => e.subkey), datasets: [{ label: s, data: plotted(entries.map((e) => e.value)), exact: entries.map((e) => e.value), backgroundColor: COLORS[i % COLORS.length] }] },
      options: {
        indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,
        layout: { padding: { right: 60 } },
        scales: { y: { ticks: { autoSkip: false, callback(v) { const l = this.getLabelForValue(v); return l.length > 48 ? `${l.slice(0, 47)}…` : l; } } }, x: { beginAtZero: true } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { label: exactLabel } } },
      },
      plugins: [valueLabels],
    });
    breakdownCharts.push(chart);
    state.breakdowns[s] = chart.data.labels.map((subkey, j) => ({ subkey, value: chart.data.datasets[0].data[j] }));
  });
}

// ---- cluster ------------------------------------------------------------------------------

let lastApiSample = null;

const cell = (text, cls) => `<td${cls ? ` class="${cls}"` : ''}>${escapeHtml(String(text ?? ''))}</td>`;
function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
const upCell = (up) => cell(up ? 'up' : 'down', up ? 'up' : 'down');

async function loadCluster() {
  state.busy++;
  try {
    const [cluster, stats] = await Promise.all([api('/cluster'), api('/stats')]);
    showError(null);
    drawCluster(cluster, stats);
  } catch (e) {
    showError(e);
  } finally {
    state.busy--;
  }
}

function drawCluster(cluster, stats) {
  const view = { realtime: [], archive: [], api: [] };
  const rt = cluster.realtime.map((s) => {
    const d = s.stats || {};
    const sender = (stats.realtime || [])[s.shard] || {};
    const lag = sender.delivery_lag_ms || {};
    const slots = (d.slots || []).map((x) => `${x.day ?? '—'}: ${x.state}`).join(', ');
    view.realtime.push({ shard: s.shard, address: s.address, up: s.up, backlog_records: sender.backlog_records, delivery_lag_p99_ms: lag.p99 });
    return `<tr data-tier="realtime" data-shard="${s.shard}" data-up="${s.up}">${cell(s.shard)}${cell(s.address)}${upCell(s.up)}` +
      `${cell(s.up ? slots : s.error)}${cell(d.closed_through ?? '—')}${cell(sender.backlog_records)}${cell(sender.backlog_seconds)}` +
      `${cell(lag.p50 !== undefined ? `${lag.p50} / ${lag.p99}` : '—')}${cell(sender.last_error || '')}</tr>`;
  });
  $('realtime-table').tBodies[0].innerHTML = rt.join('');
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
  $('api-table').tBodies[0].innerHTML = rows.join('');
  lastApiSample = { at: now, latency };
  $('cluster-meta').textContent = `API ${stats.node_id} up ${Math.round(stats.uptime_seconds)} s · ` +
    `oplog backlog ${stats.backlog_records} records · delivered ${stats.delivered_records}`;
  state.cluster = view;
  state.loads++;
}

// ---- views, live refresh, navigation ------------------------------------------------------

let liveTimer = 0;

function setLive(p) {
  clearInterval(liveTimer);
  liveTimer = 0;
  if (p.live !== '1') return;
  liveTimer = setInterval(() => {
    if (state.busy > 0) return;  // one refresh at a time
    if (state.view === 'cluster') loadCluster();
    else if (state.params.key) loadSeries(state.params, { live: true });
  }, LIVE_MS);
}

function render(p) {
  state.params = p;
  state.view = p.view === 'cluster' ? 'cluster' : 'explore';
  $('explore').hidden = state.view !== 'explore';
  $('cluster').hidden = state.view !== 'cluster';
  $('nav-explore').classList.toggle('active', state.view === 'explore');
  $('nav-cluster').classList.toggle('active', state.view === 'cluster');
  showError(null);
  setLive(p);
  if (state.view === 'cluster') {
    loadCluster();
  } else if (p.key) {
    loadSeries(p);
  } else {
    clearSeries();
  }
}

function apply() {
  const p = formParams();
  writeUrl(p, false);
  render(p);
}

function start() {
  fillZones();
  fillNamespaces();
  const p = readUrl();
  fillForm(p);
  $('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    $('suggestions').hidden = true;
    apply();
  });
  $('key').addEventListener('input', scheduleSuggest);
  $('key').addEventListener('focus', scheduleSuggest);
  $('key').addEventListener('keydown', onKeyNav);
  $('key').addEventListener('blur', () => { $('suggestions').hidden = true; });
  $('cmp').addEventListener('input', suggestCompare);
  for (const id of ['unit', 'units', 'tz', 'cmp', 'blimit', 'ns']) $(id).addEventListener('change', apply);
  $('live').addEventListener('change', () => {
    const q = { ...state.params, live: $('live').checked ? '1' : '' };
    writeUrl(q, false);
    state.params = q;
    setLive(q);
  });
  for (const a of document.querySelectorAll('nav a')) {
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      const q = { ...state.params, view: a.dataset.view };
      writeUrl(q, false);
      render(q);
    });
  }
  window.addEventListener('popstate', () => {
    const q = readUrl();
    fillForm(q);
    render(q);
  });
  render(p);
  state.ready = true;
}

start();
