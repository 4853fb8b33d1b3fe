// The gateway's own commands in the CLI's command table (commands.ts): run it, stop it, ask how
// it is, check the machine, and sign in.
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runDoctor } from "./doctor";
import { durationValue, portValue } from "./flag-values";
import { runStatus, runVersion } from "./status";
import { runStop } from "./stop";
import { runRotateKey, runToken } from "./token";

/** start, stop, status, doctor, version, token and auth rotate-key, in the order help lists them. */
export const GATEWAY_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["start"],
    summary: "Run the gateway of the home until Ctrl-C; prints one ready line with the sign-in link.",
    args: [],
    flags: {
      port: {
        type: "string",
        value: "PORT",
        help: "the port to listen on (default 10000 or PERSONALCLAW_PORT; 0 picks a free one)",
        parse: portValue,
      },
      "json-ready": { type: "boolean", help: "print the ready line as JSON (url, port, home, pid)" },
      edge: {
        type: "boolean",
        help: "also link this machine's bridge to the edge it is paired with (personalclaw edge pair)",
      },
      "accept-state-loss": {
        type: "boolean",
        help: "start although a store the state manifest knows is missing, empty or replaced",
      },
    },
    reads: false,
    // Loaded when run: the bridge, supervisor and sandbox are not compiled for the other commands.
    run: async ({ flags }, { settings, home }) =>
      (await import("./start")).startGateway({
        settings: { ...settings, home, ...(flags.port !== undefined ? { port: flags.port } : {}) },
        jsonReady: Boolean(flags["json-ready"]),
        acceptStateLoss: Boolean(flags["accept-state-loss"]),
        edge: Boolean(flags.edge),
      }),
  }),
  defineCommand({
    words: ["stop"],
    summary: "Stop the home's running gateway (as Ctrl-C would) and wait until it is gone.",
    args: [],
    flags: {},
    reads: false,
    run: (_input, { home }) => runStop(home),
  }),
  defineCommand({
    words: ["status"],
    summary: "Whether the home's gateway runs and answers: its address, version, uptime and app counts.",
    details: ["Exits 1 when no gateway runs for the home."],
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runStatus(home, flags),
  }),
  defineCommand({
    words: ["doctor"],
    summary: "Check this machine and the home; each row says ok, warn or fail and how to fix it.",
    details: ["Exits 1 when a row fails."],
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { settings, home }) => runDoctor({ ...settings, home }, flags),
  }),
  defineCommand({
    words: ["version"],
    summary: "The package version, with the workerd and Node versions it runs on.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }) => runVersion(flags),
  }),
  defineCommand({
    words: ["token"],
    summary: "Print a sign-in link for the running gateway (proves you are at this machine).",
    args: [],
    flags: {
      ttl: {
        type: "string",
        value: "DURATION",
        help: "how long the session lasts, such as 30m, 20h or 7d (default 20h, at most 90d)",
        parse: durationValue,
      },
      edge: {
        type: "boolean",
        help: "a link for the edge this machine is paired with, minted over the machine's link (its public URL)",
      },
      json: jsonFlag,
    },
    exclusive: [["ttl", "edge"]],
    reads: true,
    run: async ({ flags }, { home, settings }) =>
      // The edge's modules (with undici) are loaded for --edge only.
      flags.edge ? (await import("../edge/edge-token")).runEdgeToken(home, settings, flags) : runToken(home, flags),
  }),
  defineCommand({
    words: ["auth", "rotate-key"],
    summary: "Replace the session signing key; every session ends.",
    args: [],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags }, { home }) => runRotateKey(home, flags),
  }),
];
