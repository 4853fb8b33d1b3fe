import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMcpbLocation, readMcpbSource } from "./mcpb-fetch";
import { refusal } from "../../test/helpers/refusals";

const BUNDLE = Buffer.from("PK\u0003\u0004 bundle bytes");

describe("reading the .mcpb bundle the owner names", () => {
  let server: http.Server;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const port = (server.address() as AddressInfo).port;
      const redirects: Record<string, string> = {
        "/moved.mcpb": "/release/notes.mcpb",
        "/release/notes.mcpb": "/notes.mcpb",
        "/loop.mcpb": "/loop.mcpb",
        // Another loopback literal: not the address the owner wrote.
        "/away.mcpb": `http://127.0.0.3:${port}/notes.mcpb`,
        // This machine's address written another way (2130706433 and 0x7f.0.0.2 are 127.0.0.1 and 127.0.0.2).
        "/decimal.mcpb": `http://2130706433:${port}/notes.mcpb`,
        "/hex.mcpb": `http://0x7f.0.0.2:${port}/notes.mcpb`,
        // A name that resolves to this machine.
        "/named.mcpb": "https://files.example.com/notes.mcpb",
      };
      if (request.url === "/notes.mcpb") response.end(BUNDLE);
      else if (request.url && redirects[request.url])
        response.writeHead(302, { location: redirects[request.url] }).end();
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve));
    base = `http://127.0.0.2:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), "pc-mcpb-fetch-"));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it("names a bundle by a path ending in .mcpb or an http(s) URL, and nothing else", () => {
    expect(isMcpbLocation("./notes.mcpb")).toBe(true);
    expect(isMcpbLocation("https://example.com/download?id=1")).toBe(true);
    expect(isMcpbLocation("npm:notes@1.0.0")).toBe(false);
    expect(isMcpbLocation("./notes")).toBe(false);
  });

  it("reads a file whole, a relative path from the folder it was typed in", async () => {
    writeFileSync(join(dir, "notes.mcpb"), BUNDLE);
    const read = await readMcpbSource("notes.mcpb", dir);
    expect(read).toEqual({ source: "notes.mcpb", bytes: BUNDLE });
    mkdirSync(join(dir, "folder.mcpb"));
    expect((await refusal(readMcpbSource("folder.mcpb", dir))).code).toBe("source_unreachable");
    expect((await refusal(readMcpbSource("missing.mcpb", dir))).code).toBe("source_unreachable");
  });

  it("fetches a URL that names a literal address, under the egress address rules", async () => {
    const read = await readMcpbSource(`${base}/notes.mcpb`, dir);
    expect(read.bytes).toEqual(BUNDLE);
    expect((await refusal(readMcpbSource(`${base}/gone.mcpb`, dir))).code).toBe("source_unreachable");
  });

  it("refuses plain http:// to a name, a URL with credentials, and a name that resolves to this machine", async () => {
    const port = new URL(base).port;
    expect((await refusal(readMcpbSource(`http://localhost:${port}/notes.mcpb`, dir))).code).toBe(
      "source_spec_invalid",
    );
    expect((await refusal(readMcpbSource(`https://user:pw@example.com/notes.mcpb`, dir))).code).toBe(
      "source_spec_invalid",
    );
    const rebinding = readMcpbSource("https://bundles.example.com/notes.mcpb", dir, {
      resolve: async () => ["127.0.0.2"],
    });
    expect((await refusal(rebinding)).code).toBe("source_address_refused");
  });

  it("follows a redirect on the same terms as the URL the owner gave, at most five times", async () => {
    expect((await readMcpbSource(`${base}/moved.mcpb`, dir)).bytes).toEqual(BUNDLE);
    const loop = await refusal(readMcpbSource(`${base}/loop.mcpb`, dir));
    expect(loop.code).toBe("source_unreachable");
    expect(loop.message).toContain("more than 5 times");
    // A redirect to a local address the owner did not write is refused, as the URL itself would be.
    expect((await refusal(readMcpbSource(`${base}/away.mcpb`, dir))).code).toBe("source_address_refused");
    expect((await refusal(readMcpbSource(`${base}/decimal.mcpb`, dir))).code).toBe("source_address_refused");
    // The owner's own literal written in hex is still the owner's: the parser reads it as 127.0.0.2.
    expect((await readMcpbSource(`${base}/hex.mcpb`, dir)).bytes).toEqual(BUNDLE);
    const named = readMcpbSource(`${base}/named.mcpb`, dir, { resolve: async () => ["127.0.0.2"] });
    expect((await refusal(named)).code).toBe("source_address_refused");
  });
});
