// An internal call (X-Internal-Secret) names the work it does, so the security log can say whose
// work it was: the worker's calls to the bridge are "gateway", a CLI command "cli:<command>".
// The header names that work, not a session; its earlier name is still read when the new one is
// absent, so a script written against it keeps working.

/** The work of the edge's calls that a paired bridge's link hands to it (edge mode): the edge's gateway, not this machine's. */
export const EDGE_WORK = "edge";

/** The header an internal call names its work in. */
export const WORK_HEADER = "X-PersonalClaw-Work";

/** The earlier name of the same header, read only when WORK_HEADER is absent. */
export const EARLIER_WORK_HEADER = "X-Session-Key";

/** The work a call names ("" for none), given a reader of its headers by lower-case name. */
export function namedWork(header: (lowerCaseName: string) => string | null | undefined): string {
  return header(WORK_HEADER.toLowerCase()) ?? header(EARLIER_WORK_HEADER.toLowerCase()) ?? "";
}
