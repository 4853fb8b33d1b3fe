// The bridge's /folders/ operation: the check of a folder the owner chooses for an app, made
// where the files are (granted-folders.ts). The gateway records only what this answers.
import { GatewayError } from "../../kernel/contracts/errors";
import { checkGrantableFolder } from "../sandbox/granted-folders";
import type { HandlersUnder } from "../bridge-contract";
import type { BridgeRuntime } from "../bridge-runtime";

export function folderOperations(rt: BridgeRuntime): HandlersUnder<"/folders/"> {
  return {
    "POST /folders/resolve": async ({ body: { path, access, wholeHome } }) => {
      const { home, ownerHome, sandbox } = rt.hookContext();
      const checked = checkGrantableFolder(path, access, wholeHome, {
        home,
        ownerHome,
        identity: sandbox.childIdentity ?? null,
      });
      if (!checked.ok) throw new GatewayError(checked.code, { vars: checked.vars });
      return { path: checked.path };
    },
  };
}
