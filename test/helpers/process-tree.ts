// The processes below one process, read from the host's /proc (never from inside a box): for
// suites that check what the gateway's children really are on the host.
import { readdirSync, readFileSync } from "node:fs";

/** The pids below `root` by parent pid, at the moment of reading (`root` itself not included). */
export function descendantPids(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const below = new Set([root]);
  const found: number[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of parents)
      if (below.has(parent) && !below.has(pid)) {
        below.add(pid);
        found.push(pid);
        grew = true;
      }
  }
  return found;
}
