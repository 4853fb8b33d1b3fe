// `personalclaw stop`: asks the home's running gateway to stop (SIGTERM, as Ctrl-C would)
// and waits until it has removed gateway.json. A record whose pid is now some other process
// (start time or executable differ) is stale: it is removed, and nothing is signalled.
import { homePaths } from "../home";
import { isRecordedGatewayAlive, readGatewayFile, removeGatewayFile } from "./gateway-file";

const STOP_WAIT_MS = 12_000;

export async function runStop(home: string): Promise<number> {
  const paths = homePaths(home);
  const gateway = readGatewayFile(paths);
  if (!gateway || !isRecordedGatewayAlive(gateway)) {
    if (gateway) {
      removeGatewayFile(paths);
      process.stderr.write(
        `personalclaw: no gateway is running for ${home}; removed the stale gateway.json (pid ${gateway.pid} is not the gateway that wrote it).\n`,
      );
    } else process.stderr.write(`personalclaw: no gateway is running for ${home}.\n`);
    return 1;
  }
  process.kill(gateway.pid, "SIGTERM");
  const until = Date.now() + STOP_WAIT_MS;
  while (Date.now() < until) {
    if (!isRecordedGatewayAlive(gateway) && readGatewayFile(paths) === null) {
      process.stdout.write(`Stopped the gateway (pid ${gateway.pid}).\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write(
    `personalclaw: the gateway (pid ${gateway.pid}) did not stop within ${STOP_WAIT_MS / 1000} s.\n`,
  );
  return 1;
}
