// What a running gateway holds in memory: its workerd, its bridge, and the app backends the
// bridge started (outside workerd's process tree), from /proc.
import { descendants, rssKiB } from "./procs.mjs";

/** RSS in KiB of a gateway's workerd, its bridge, both together, and its backends' processes. */
export function gatewayRss(gateway) {
  const workerd = rssKiB(gateway.workerdPid);
  const bridge = rssKiB(gateway.bridgePid);
  const workerdTree = new Set([gateway.workerdPid, ...descendants(gateway.workerdPid)]);
  const backendPids = descendants(gateway.bridgePid).filter((p) => !workerdTree.has(p));
  const backends = backendPids.reduce((sum, p) => sum + rssKiB(p), 0);
  return { workerd, bridge, gateway: workerd + bridge, backends, backendProcesses: backendPids.length };
}
