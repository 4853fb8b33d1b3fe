// A bare reverse proxy in workerd: forwards the request as received to the backend on
// loopback and streams the answer back. No auth, no permission check, no signature of its
// own (the load generator signs, so the backend does the same verification as behind the gateway).
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    return fetch(`http://127.0.0.1:${env.BACKEND_PORT}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === "GET" || request.method === "HEAD" ? undefined : request.body,
      redirect: "manual",
    });
  },
};
