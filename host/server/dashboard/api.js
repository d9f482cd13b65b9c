// The host's JSON API, with the token the person gave, kept in
// sessionStorage: for this browser tab only, gone when it closes.

const tokenKey = "durabox.token";

export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function token() {
  return sessionStorage.getItem(tokenKey) || "";
}

export function setToken(t) {
  if (t) sessionStorage.setItem(tokenKey, t);
  else sessionStorage.removeItem(tokenKey);
}

// api asks the host: method GET unless told, body sent as JSON. It
// returns the decoded answer, or throws an APIError with the host's
// message.
export async function api(path, {method = "GET", body} = {}) {
  const headers = {Accept: "application/json"};
  const t = token();
  if (t) headers.Authorization = "Bearer " + t;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let resp;
  try {
    resp = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    throw new APIError(0, "the host does not answer (" + e.message + ")");
  }
  const text = await resp.text();
  let data;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new APIError(resp.status, "the host answered " + resp.status + " with what is not JSON");
  }
  if (!resp.ok) throw new APIError(resp.status, (data && data.error) || resp.statusText);
  return data;
}

// query writes params (arrays as repeated parameters, empty values left
// out) as a query string, with its "?", or "".
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) if (x !== undefined && x !== null && x !== "") q.append(k, x);
  }
  const s = q.toString();
  return s ? "?" + s : "";
}
