// `restore --mode merge`: adds to a running gateway what it lacks from a checked archive.
import { GatewayError } from "../../kernel/contracts/errors";
import type { CheckedArchive } from "../durability/archive-check";
import type { RestorePlan } from "../durability/restore-plan";

export async function mergeIntoHome(
  home: string,
  checked: CheckedArchive,
  plan: RestorePlan,
  json: boolean,
): Promise<number> {
  void home;
  void checked;
  void plan;
  void json;
  throw new GatewayError("bad_request", { vars: { reason: "--mode merge is not available yet; use --mode replace" } });
}
