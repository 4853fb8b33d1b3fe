// `personalclaw token [--ttl D]` and `personalclaw auth rotate-key`.
import { MintedTokenAnswerSchema } from "../../kernel/contracts/session";
import { callGateway, parseAnswer } from "./gateway-client";
import { commandHint } from "./invocation";
import { printRefusal } from "./print";

export async function runToken(home: string, options: { ttl?: string; json?: boolean }): Promise<number> {
  const query = options.ttl === undefined ? "" : `?ttl=${encodeURIComponent(options.ttl)}`;
  const answer = await callGateway(home, "token", "GET", `/api/token/local${query}`, undefined, {
    provePresence: true,
  });
  const minted = parseAnswer(answer, MintedTokenAnswerSchema);
  if (!minted.ok) return printRefusal(minted.answer, Boolean(options.json));
  const { url, lasts, expires_at, explains } = minted.body;
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ url, lasts, expires_at, explains })}\n`);
    return 0;
  }
  process.stdout.write(`${url}\n`);
  // The gateway's own words, with the command spelled the way this CLI was run.
  process.stderr.write(
    `${explains.replace("`personalclaw auth rotate-key`", `\`${commandHint("auth", "rotate-key")}\``)}\n`,
  );
  return 0;
}

export async function runRotateKey(home: string, options: { json?: boolean }): Promise<number> {
  const answer = await callGateway(home, "auth-rotate-key", "POST", "/api/auth/rotate-key", {});
  if (answer.status !== 200) return printRefusal(answer, Boolean(options.json));
  if (options.json) process.stdout.write(`${JSON.stringify(answer.body)}\n`);
  else
    process.stdout.write(
      `The signing key was replaced; ${answer.body.sessions_ended} sessions ended. Run \`${commandHint("token")}\` to sign in again.\n`,
    );
  return 0;
}
