// The egress broker: a small HTTP request through it (absolute form, the app's connection to the
// broker kept, the broker dialling the origin per request as it does), a CONNECT tunnel per
// request, and requests in one kept CONNECT tunnel, each against the same request made directly
// by a process without the broker (a new connection per request, or one kept). p50/p99 at 1
// connection, and CPU per request of the whole path (client + broker + origin, each its own
// process) beside the broker's own; and each against a bare Node proxy doing the same with no
// check at all, the floor any proxy written in Node stands on.
import { egressFigures, measureInterleaved, startEgressRig } from "../lib/egress-setup.mjs";

const PAIRS = [
  {
    subject: "broker-forward",
    baseline: "direct-fresh",
    name: "HTTP GET through the broker (absolute form)",
    label: "the same GET direct, a new connection each",
  },
  {
    subject: "connect-fresh",
    baseline: "direct-fresh",
    name: "HTTP GET in a CONNECT tunnel opened for it",
    label: "the same GET direct, a new connection each",
  },
  {
    subject: "connect-kept",
    baseline: "direct-kept",
    name: "HTTP GET in a kept CONNECT tunnel",
    label: "the same GET direct, its connection kept",
  },
  {
    subject: "broker-forward",
    baseline: "bare-forward",
    name: "HTTP GET through the broker (absolute form)",
    label: "a bare Node forward proxy, no checks (the floor of a proxy in Node)",
    ownBaseline: "broker",
  },
  {
    subject: "connect-fresh",
    baseline: "bare-connect-fresh",
    name: "HTTP GET in a CONNECT tunnel opened for it",
    label: "a bare Node CONNECT proxy, no checks (the floor)",
    ownBaseline: "broker",
  },
  {
    subject: "connect-kept",
    baseline: "bare-connect-kept",
    name: "HTTP GET in a kept CONNECT tunnel",
    label: "a bare Node CONNECT proxy, no checks (the floor)",
    ownBaseline: "broker",
  },
];

/** Measures each way at 1 and 10 connections, interleaved, and records each pair's figures. */
export async function brokerSection(bench) {
  const rig = await startEgressRig(bench);
  const ways = [
    "broker-forward",
    "direct-fresh",
    "bare-forward",
    "connect-fresh",
    "bare-connect-fresh",
    "connect-kept",
    "direct-kept",
    "bare-connect-kept",
  ];
  bench.raw.broker = {};
  for (const connections of [1]) {
    const runs = await measureInterleaved(bench, rig, ways, connections, "egress broker");
    bench.raw.broker[connections] = runs;
    const at = `${connections} connection${connections === 1 ? "" : "s"}`;
    for (const pair of PAIRS) egressFigures(bench, "broker", runs, { ...pair, at });
  }
}
