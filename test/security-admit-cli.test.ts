// `personalclaw security admit`, the witness owner's side of admission, with two real gateways:
// a log is cosigned by the other only after that gateway's owner admitted its key with the CLI.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gatewayPerSuite, runCli } from "./helpers/gateway";

describe("personalclaw security admit", () => {
  const origin = gatewayPerSuite();
  const witness = gatewayPerSuite();
  const work = mkdtempSync(join(tmpdir(), "pc-admit-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("admits a log by its checkpoint key, after which that log's checkpoints are cosigned; a bad key is refused", async () => {
    const url = `http://127.0.0.1:${witness.port}/api/security/witness`;
    const note = join(work, "checkpoint");
    const written = await runCli(["security", "checkpoint", "--out", note, "--json", "--home", origin.home]);
    expect(written.code, written.stderr).toBe(0);
    const checkpoint = JSON.parse(written.stdout) as { origin: string; public_key: string };

    const notYet = await runCli(["security", "witness", url, "--json", "--home", origin.home]);
    expect(notYet.code).not.toBe(0);
    expect(notYet.stderr + notYet.stdout).toContain("witness_log_not_admitted");

    // The key as the file `security checkpoint --out` wrote beside the note.
    const admitted = await runCli(["security", "admit", `${note}.pub`, "--json", "--home", witness.home]);
    expect(admitted.code, admitted.stderr).toBe(0);
    expect(JSON.parse(admitted.stdout)).toEqual({
      origin: checkpoint.origin,
      public_key: checkpoint.public_key,
      admitted_logs: 1,
    });
    const cosigned = await runCli(["security", "witness", url, "--json", "--home", origin.home]);
    expect(cosigned.code, cosigned.stderr + cosigned.stdout).toBe(0);

    // The admission is a row on the witness, made as its owner.
    const rows = (await (await witness.fetch("/api/security/events?kind=witness_log_admitted")).json()) as {
      events: Array<{ principal: string; subject: string }>;
    };
    expect(rows.events.map((row) => [row.principal, row.subject])).toEqual([["owner", checkpoint.origin]]);

    // The key itself, in text mode: admitted again, still one log.
    const again = await runCli(["security", "admit", checkpoint.public_key, "--home", witness.home]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(
      `Admitted the log ${checkpoint.origin}: this gateway now cosigns its checkpoints (1 of at most 100 logs admitted).\n`,
    );

    const refused = await runCli(["security", "admit", "not-a-key", "--json", "--home", witness.home]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe("witness_checkpoint_invalid");
  }, 120_000);
});
