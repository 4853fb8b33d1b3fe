// The dashboard's one door to the gateway API. Every answer becomes a value:
// {ok: true, data} or {ok: false, status, code, message, detail, isAuthRequired}.
// The session cookie is HttpOnly, so this code never sees or sends a token itself.

const NETWORK_FAILURE = {
  code: "network_error",
  message: "The gateway did not answer. Is `personalclaw start` still running?",
};

/** Creates the client; `onAuthRequired(error)` runs whenever an answer says to sign in. */
export function createApiClient(onAuthRequired) {
  async function call(method, path, body) {
    /** @type {RequestInit & { headers: Record<string, string> }} */
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") {
      // State-changing requests must declare JSON; an empty object is the body of a bare action.
      init.headers["Content-Type"] = "application/json";
      // A write that needs the owner's yes answers its question as 200 (CONV-14), so no Allow dialog logs a failed request.
      init.headers["X-PersonalClaw-Consent"] = "ask";
      init.body = JSON.stringify(body ?? {});
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch {
      return { ok: false, status: 0, detail: undefined, isAuthRequired: false, ...NETWORK_FAILURE };
    }
    let payload;
    try {
      payload = await response.json();
    } catch {
      payload = null;
    }
    // A 200 marked Consent-Asked is the question, never a success.
    const asked = response.headers.get("X-PersonalClaw-Consent-Asked") === "1";
    if (response.ok && !asked) return { ok: true, status: response.status, data: payload ?? {} };
    const envelope =
      payload && typeof payload === "object" && payload.error && typeof payload.error === "object" ? payload.error : {};
    const error = {
      ok: false,
      status: response.status,
      code: typeof envelope.code === "string" ? envelope.code : `http_${response.status}`,
      message:
        typeof envelope.message === "string"
          ? envelope.message
          : `The gateway answered ${response.status} ${response.statusText}.`,
      detail: envelope.detail,
      isAuthRequired: response.headers.get("X-Auth-Required") === "true",
      isConsentQuestion: asked,
    };
    if (error.isAuthRequired) onAuthRequired(error);
    return error;
  }
  return {
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
    delete: (path, body) => call("DELETE", path, body),
    patch: (path, body) => call("PATCH", path, body),
    put: (path, body) => call("PUT", path, body),
  };
}
