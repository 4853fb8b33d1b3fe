// `personalclaw token [--ttl D]` and `personalclaw auth rotate-key`.
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";
import { printRefusal } from "./print";

export async function runToken(home: string, options: { ttl?: string; json?: boolean }): Promise<number> {
  const query = options.ttl === undefined ? "" : `?ttl=${encodeURIComponent(options.ttl)}`;
  const answer = await callGateway(home, "token", "GET", `/api/token/local${query}`, undefined, {
    provePresence: true,
  });
  if (answer.status !== 200) return printRefusal(answer, Boolean(options.json));
  if (options.json) {
    const { url, lasts, expires_at } = answer.body;
    process.stdout.write(`${JSON.stringify({ url, lasts, expires_at })}\n`);
    return 0;
  }
  process.stdout.write(`${answer.body.url}\n`);
  process.stderr.write(
    `This link signs in for ${answer.body.lasts} (until ${answer.body.expires_at}); open it within 24 hours.\n`,
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
