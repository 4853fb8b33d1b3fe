// The `security` commands in the CLI's command table (commands.ts): read and verify the
// security log, sign and witness its checkpoints, and acknowledge a lost anchor.
import { SecurityOutcomeSchema } from "../../kernel/contracts/security-event";
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { countValue, oneOf, timeValue } from "./flag-values";
import {
  runSecurityAcknowledge,
  runSecurityAdmit,
  runSecurityCheckpoint,
  runSecurityEvents,
  runSecuritySeed,
  runSecurityVerify,
  runSecurityWitness,
} from "./security";

/** The security commands, in the order help lists them. */
export const SECURITY_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["security", "events"],
    summary: "Show security events, newest first.",
    args: [],
    flags: {
      kind: { type: "string", value: "KIND", help: "only events of this kind" },
      principal: { type: "string", value: "WHO", help: "only events of this principal (owner, app:<name>, cli ...)" },
      subject: { type: "string", value: "SUBJECT", help: "only events about this subject (for most, an app's name)" },
      outcome: {
        type: "string",
        value: "OUTCOME",
        help: `only events with this outcome (${SecurityOutcomeSchema.options.join(", ")})`,
        parse: oneOf(SecurityOutcomeSchema.options),
      },
      since: { type: "string", value: "TIME", help: "only events at or after this ISO-8601 time", parse: timeValue },
      limit: { type: "string", value: "N", help: "at most N events (1 to 1000)", parse: countValue(1000) },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags }, { home }) => runSecurityEvents(home, flags),
  }),
  defineCommand({
    words: ["security", "verify"],
    summary: "Verify the security log's chain (exit 1 if it is broken).",
    details: [
      "With --checkpoint it works offline from the stored log: it proves the log extends a signed checkpoint",
      "with the public key alone; --seed recomputes every row's mac too.",
    ],
    args: [],
    flags: {
      checkpoint: { type: "string", value: "FILE", help: "a checkpoint note `security checkpoint` wrote" },
      "public-key": {
        type: "string",
        value: "KEY",
        help: "the checkpoint's public key or its file (default FILE.pub)",
      },
      seed: { type: "string", value: "CODE", help: "the verification code shown at the first start" },
      "epoch0-key": { type: "string", value: "FILE", help: "a log started before epochs: its sel_hmac.key" },
      edge: {
        type: "boolean",
        help: "verify the paired edge's log, against the anchor this machine keeps of it (start --edge)",
      },
      json: jsonFlag,
    },
    exclusive: [
      ["edge", "checkpoint"],
      ["edge", "seed"],
      ["edge", "epoch0-key"],
    ],
    reads: true,
    run: ({ flags }, { home, settings }) => runSecurityVerify(home, flags, settings),
  }),
  defineCommand({
    words: ["security", "checkpoint"],
    summary: "Sign the log's head; with --out write the note to FILE and its public key to FILE.pub.",
    args: [],
    flags: { out: { type: "string", value: "FILE", help: "where to write the checkpoint note" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runSecurityCheckpoint(home, flags),
  }),
  defineCommand({
    words: ["security", "seed"],
    summary: "Show the security log's verification code, unsealed with PERSONALCLAW_SEL_SEED_PASSPHRASE.",
    args: [],
    flags: { show: { type: "boolean", help: "show it (required: the code is never printed unasked)" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home, settings }) => runSecuritySeed(home, settings.seedPassphrase, flags),
  }),
  defineCommand({
    words: ["security", "witness"],
    summary: "Show each checkpoint to a witness and keep its cosignatures.",
    args: [{ name: "url", help: "the http(s) address of the witness endpoint" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecurityWitness(home, args[0], flags),
  }),
  defineCommand({
    words: ["security", "admit"],
    summary: "As a witness: admit a log, so its checkpoints are cosigned here.",
    details: [
      "The log's owner reads its public key from `security checkpoint --json` (or the FILE.pub it wrote)",
      "and hands it to you; only admitted logs are cosigned, at most 100.",
    ],
    args: [{ name: "public-key", help: "the log's checkpoint public key, or a file holding it" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecurityAdmit(home, args[0], flags),
  }),
  defineCommand({
    words: ["security", "acknowledge"],
    summary: "Record that you know the security-log anchor was lost (doctor stops failing).",
    args: [],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags }, { home }) => runSecurityAcknowledge(home, flags),
  }),
];
