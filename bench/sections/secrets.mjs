// Secrets an app never holds: a small request for which the egress broker opens TLS to the
// secret's origin and writes the value (a plain-HTTP request from the app, the placeholder in its
// header), against the app doing TLS itself through a CONNECT tunnel to the same origin, in the
// same run: a tunnel per request, and its tunnel kept alive. The broker keeps its own TLS
// connections to the origin (origin-connections.ts). p50/p99 at 1 and 10 connections, and CPU
// per request of the whole path (client + broker + origin) beside the broker's own.
import { egressFigures, measureInterleaved, startEgressRig } from "../lib/egress-setup.mjs";

const NAME = "request with the broker's TLS and the secret written";

/** Measures each way at 1 and 10 connections, interleaved, and records the originated request against both tunnels. */
export async function secretsSection(bench) {
  const rig = await startEgressRig(bench);
  bench.raw.secretOrigin = {};
  for (const connections of [1, 10]) {
    const runs = await measureInterleaved(
      bench,
      rig,
      ["originated", "tunnelled-fresh", "tunnelled-kept"],
      connections,
      "secret origin",
    );
    bench.raw.secretOrigin[connections] = runs;
    const at = `${connections} connection${connections === 1 ? "" : "s"}`;
    egressFigures(bench, "secrets", runs, {
      subject: "originated",
      baseline: "tunnelled-fresh",
      name: NAME,
      label: "the app's own TLS through CONNECT, a tunnel per request",
      at,
      ownBaseline: "broker",
    });
    egressFigures(bench, "secrets", runs, {
      subject: "originated",
      baseline: "tunnelled-kept",
      name: NAME,
      label: "the app's own TLS through CONNECT, its tunnel kept alive",
      at,
      ownBaseline: "broker",
    });
  }
}
