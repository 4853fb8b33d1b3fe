// The `approvals` commands in the CLI's command table (commands.ts): what waits for the owner's
// answer, the answer itself, and the grants scoped answers left.
import { APPROVAL_SCOPES } from "../../kernel/contracts/approvals";
import { runApprovalsAnswer, runApprovalsGrants, runApprovalsList, runApprovalsRevoke } from "./approvals";
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { oneOf } from "./flag-values";

/** The approvals commands, in the order help lists them. */
export const APPROVALS_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["approvals", "list"],
    summary: "What waits for your answer.",
    args: [],
    flags: { all: { type: "boolean", help: "every approval, answered ones too" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runApprovalsList(home, flags),
  }),
  defineCommand({
    words: ["approvals", "approve"],
    summary: "Approve a waiting ask; a scope other than once answers the next same asks too.",
    args: [{ name: "id", help: "the approval" }],
    flags: {
      scope: {
        type: "string",
        value: "SCOPE",
        help: `how long the yes holds: ${APPROVAL_SCOPES.join(", ")} (default once)`,
        parse: oneOf(APPROVAL_SCOPES),
      },
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsAnswer("approve", home, args[0], flags),
  }),
  defineCommand({
    words: ["approvals", "deny"],
    summary: "Deny a waiting ask.",
    args: [{ name: "id", help: "the approval" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsAnswer("deny", home, args[0], flags),
  }),
  defineCommand({
    words: ["approvals", "grants"],
    summary: "The live grants scoped answers left.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runApprovalsGrants(home, flags),
  }),
  defineCommand({
    words: ["approvals", "revoke"],
    summary: "Revoke a grant; its asker asks again.",
    args: [{ name: "grant-id", help: "the grant" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsRevoke(home, args[0], flags),
  }),
];
