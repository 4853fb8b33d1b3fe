// The bench's security log: the product's SecurityLog class with one measurement method added
// (sel-append.ts), bound in a bench-only workerd config under a bench uniqueKey with its own
// localDisk storage, so no gateway log is ever touched. GET /append?object=&n=&chained=1
import { SecurityLog } from "../../durable/security-log/security-log";
import { benchAppend, type BenchAppendResult } from "./sel-append";

/** SecurityLog plus benchAppend, for this bench only. */
export class BenchSecurityLog extends SecurityLog {
  async benchAppend(n: number, chained: boolean): Promise<BenchAppendResult> {
    return benchAppend(this.core, this.ctx.storage.sql, n, chained);
  }
}

interface BenchEnv {
  SECURITY_LOG: DurableObjectNamespace<BenchSecurityLog>;
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
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
