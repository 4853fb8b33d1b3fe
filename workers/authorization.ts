// Who may call a route: one value in each row of the route table.

/**
 * Who may call a route. `owner` refuses every app whatever it declared. `answer-rule` lets
 * every principal reach the handler, which applies the one approval answer rule
 * (guards/approval-answer.ts) so that every refused answer is the same 403 with its row.
 */
export type Authorization =
  | { kind: "bootstrap"; why: string }
  | { kind: "owner" }
  | { kind: "internal-only" }
  | { kind: "answer-rule"; why: string }
  | { kind: "app-may"; why: string; owns?: string; grant?: "appMessaging" | "approvals" };
