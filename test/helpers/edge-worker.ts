// The built worker as Cloudflare's tools run it (Miniflare with the bindings wrangler.jsonc
// declares, as `wrangler dev` does), in edge mode on an https origin whose TLS certificate a test
// CA signed. The edge-link suite and the bench's link section start it the same way.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import type { TestCertificates } from "./test-ca";

/** Starts the edge worker at `origin` (served on 127.0.0.1, a free port); answers it and the port. */
export async function startEdgeWorker(opts: {
  repoRoot: string;
  origin: string;
  certs: TestCertificates;
  pairingSecret: string;
  internalSecret: string;
}): Promise<{ edge: Miniflare; port: number }> {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(opts.repoRoot, "wrangler.jsonc"));
  const edge = new Miniflare({
    ...(workerOptions as object),
    name: "personalclaw",
    modules: true,
    scriptPath: join(opts.repoRoot, "dist", "worker.js"),
    bindings: {
      ...(workerOptions.bindings as Record<string, string>),
      PERSONALCLAW_PUBLIC_ORIGIN: opts.origin,
      PERSONALCLAW_PAIRING_SECRET: opts.pairingSecret,
      INTERNAL_SECRET: opts.internalSecret,
      SEL_KEY: randomBytes(32).toString("hex"),
    },
    host: "127.0.0.1",
    port: 0,
    https: true,
    httpsKey: opts.certs.key,
    httpsCert: opts.certs.cert,
  } as ConstructorParameters<typeof Miniflare>[0]);
  return { edge, port: Number((await edge.ready).port) };
}
