// A bare reverse proxy in workerd: forwards the request as received to the backend and streams
// the answer back. No auth, no permission check, no signature of its own (the load generator
// signs, so the backend does the same verification as behind the gateway). It reaches the
// backend through the BACKEND service binding (a slot's UNIX socket, the gateway's transport to
// a confined backend) when it has one, otherwise on loopback TCP.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const init = {
      method: request.method,
      headers: request.headers,
      body: request.method === "GET" || request.method === "HEAD" ? undefined : request.body,
      redirect: "manual",
    };
    if (env.BACKEND) return env.BACKEND.fetch(`http://app-backend${url.pathname}${url.search}`, init);
    return fetch(`http://127.0.0.1:${env.BACKEND_PORT}${url.pathname}${url.search}`, init);
  },
};
