// `personalclaw token [--ttl D]` and `personalclaw auth rotate-key`.
import { parseArgs } from "node:util";
import { callGateway, readLocalSecret } from "./gateway-client";
import { printRefusal } from "./print";

export async function runToken(args: string[], home: string): Promise<number> {
  const { values } = parseArgs({ args, options: { ttl: { type: "string" } } });
  const query = values.ttl === undefined ? "" : `?ttl=${encodeURIComponent(values.ttl)}`;
  // The local secret proves the owner is at this machine (AUTH-26).
  const answer = await callGateway(home, "token", "GET", `/api/token/local${query}`, undefined, {
    "X-Local-Secret": readLocalSecret(home),
  });
  if (answer.status !== 200) return printRefusal(answer, false);
  process.stdout.write(`${answer.body.url}\n`);
  process.stderr.write(
    `This link signs in for ${answer.body.lasts} (until ${answer.body.expires_at}); open it within 24 hours.\n`,
  );
  return 0;
}

export async function runRotateKey(home: string): Promise<number> {
  const answer = await callGateway(home, "auth-rotate-key", "POST", "/api/auth/rotate-key", {});
  if (answer.status !== 200) return printRefusal(answer, false);
  process.stdout.write(
    `The signing key was replaced; ${answer.body.sessions_ended} sessions ended. Run \`personalclaw token\` to sign in again.\n`,
  );
  return 0;
}
