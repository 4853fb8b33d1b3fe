// Edge mode in the CLI's command table (commands.ts): pairing this machine with a gateway worker
// deployed to Cloudflare (docs/deploy-cloudflare.md). `start --edge` then keeps the link up.
import { safeLine } from "../../kernel/text/text-safety";
import { homePaths } from "../home";
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { readSecretValue } from "./settings";

export const EDGE_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["edge", "pair"],
    summary:
      "Pair this machine with an edge worker: its own Ed25519 key, proved with the one-time pairing secret or a pairing code.",
    details: [
      "The pairing secret (set at deploy with `wrangler secret put PERSONALCLAW_PAIRING_SECRET`) is read from a prompt or standard input, never from the command line; the edge spends it on this pairing.",
      "Each further machine pairs with --code: a one-time code the signed-in owner creates in the dashboard (Settings, Edge), good for 10 minutes, read the same way.",
      "The pairing is kept in <home>/edge.json (0600); `personalclaw start --edge` then links this machine's bridge to the edge.",
    ],
    args: [{ name: "url", help: "the edge's public https:// origin" }],
    flags: {
      code: {
        type: "boolean",
        help: "read a pairing code the owner created in the dashboard instead of the pairing secret",
      },
      json: jsonFlag,
    },
    reads: false,
    run: async ({ args, flags }, { home, settings }) => {
      // Loaded by this command alone: undici is the CLI's largest library.
      const [{ pairWithEdge }, { edgeDispatcher }] = await Promise.all([
        import("../edge/edge-pair"),
        import("../edge/edge-dispatcher"),
      ]);
      const outcome = await pairWithEdge({
        edgeFile: homePaths(home).edge,
        edgeAnchorFile: homePaths(home).edgeSelAnchor,
        url: args[0]!,
        pairingSecret: await readSecretValue(flags.code ? "the pairing code" : "the pairing secret"),
        code: Boolean(flags.code),
        dispatcher: edgeDispatcher(settings.edgeConnectTo),
      });
      if (!outcome.ok) {
        if (flags.json)
          process.stdout.write(`${JSON.stringify({ error: { code: outcome.code, message: outcome.message } })}\n`);
        else process.stderr.write(`personalclaw: ${safeLine(outcome.message)} (${safeLine(outcome.code)})\n`);
        return 1;
      }
      const { origin, machine, paired_at } = outcome.record;
      if (flags.json) process.stdout.write(`${JSON.stringify({ origin, machine, paired_at })}\n`);
      else process.stdout.write(`Paired this machine (${machine}) with ${origin}.\n`);
      return 0;
    },
  }),
];
