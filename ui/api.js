// The dashboard's one way to the API (docs/dashboard.md#what-it-asks-the-api): every request
// goes through fetchJson, and every answer's text through parseCounts — the one place where
// JSON numbers become values.

export class ApiError extends Error {
  constructor(status, statusTxt, message) {
    super(message);
    this.status = status;
    this.statusTxt = statusTxt;
  }
}

// The JSON of an answer, as values. The API's counts are exact integers of up to 128 bits
// (docs/api.md#conventions) and JSON.parse alone rounds any past Number.MAX_SAFE_INTEGER:
// the reviver reads such a number's own text (context.source) into a BigInt. A BigInt goes
// back into JSON as its exact digits (JSON.rawJSON), so the shown answer keeps every digit.
export function parseCounts(text) {
  return JSON.parse(text, (key, value, context) =>
    (typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context?.source ?? '')
      ? BigInt(context.source) : value));
}
BigInt.prototype.toJSON = function toJSON() { return JSON.rawJSON(this.toString()); };

// A query string of params (in order, empty values left out) with '+' and ' ' percent-
// encoded: the API reads '+' as a space, so a zone '+5' must travel as %2B5.
export function queryString(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
}

// GET path?params → the envelope's data; an error envelope (or none) becomes an ApiError
// carrying the API's own status_txt and message.
export async function fetchJson(path, params = {}) {
  const q = queryString(params);
  let r;
  let text;
  try {
    r = await fetch(q ? `${path}?${q}` : path, { cache: 'no-store' });
    text = await r.text();
  } catch (e) {
    throw new ApiError(0, 'API_UNREACHABLE', `the API did not answer ${path}: ${e.message}`);
  }
  let body = null;
  try { body = parseCounts(text); } catch (e) { /* not JSON: named below */ }
  if (!body || typeof body.status_code !== 'number') {
    throw new ApiError(r.status, `HTTP_${r.status}`, `${path} answered HTTP ${r.status} without a JSON envelope`);
  }
  if (body.status_code !== 200) throw new ApiError(body.status_code, body.status_txt, body.message || body.status_txt);
  return body.data;
}
