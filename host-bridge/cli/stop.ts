// `personalclaw stop`: asks the home's running gateway to stop (SIGTERM, as Ctrl-C would)
// and waits until it has removed gateway.json.
import { homePaths } from "../home";
import { isProcessAlive, readGatewayFile } from "./gateway-file";

const STOP_WAIT_MS = 12_000;

export async function runStop(home: string): Promise<number> {
  const paths = homePaths(home);
  const gateway = readGatewayFile(paths);
  if (!gateway || !isProcessAlive(gateway.pid)) {
    process.stderr.write(`personalclaw: no gateway is running for ${home}.\n`);
    return 1;
  }
  process.kill(gateway.pid, "SIGTERM");
  const until = Date.now() + STOP_WAIT_MS;
  while (Date.now() < until) {
    if (!isProcessAlive(gateway.pid) && readGatewayFile(paths) === null) {
      process.stdout.write(`Stopped the gateway (pid ${gateway.pid}).\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write(`personalclaw: the gateway (pid ${gateway.pid}) did not stop within ${STOP_WAIT_MS / 1000} s.\n`);
  return 1;
}
