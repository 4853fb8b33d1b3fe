// Who may call a route: one value in each row of the route table.

/** Who may call a route. `owner` refuses every app whatever it declared. */
export type Authorization =
  | { kind: "bootstrap"; why: string }
  | { kind: "owner" }
  | { kind: "internal-only" }
  | { kind: "app-may"; why: string; owns?: string; grant?: "appMessaging" };
