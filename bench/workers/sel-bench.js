// Drives SecurityLog.benchAppend from a bench-only workerd config: the SecurityLog class is
// the product's own (imported from the built dist/worker.js), bound under a bench uniqueKey
// with its own localDisk storage, so no gateway log is ever touched. GET /append?object=&n=&chained=1
export { SecurityLog } from "./worker.js";

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/ready") return new Response("ready");
    if (url.pathname !== "/append") return new Response("not found", { status: 404 });
    const object = url.searchParams.get("object") ?? "";
    if (!/^bench-[a-z0-9-]{1,60}$/.test(object)) return new Response("object must be bench-<name>", { status: 400 });
    const stub = env.SECURITY_LOG.get(env.SECURITY_LOG.idFromName(object));
    const result = await stub.benchAppend(Number(url.searchParams.get("n")), url.searchParams.get("chained") === "1");
    return Response.json(result);
  },
};
