// A PyPI-shaped package index stand-in for tests (there is no PyPI here): the PEP 691 JSON simple
// API (GET /simple/<normalized name>/ answers {name, files: [{filename, url, hashes: {sha256}}]})
// and the wheel files it lists, on a loopback address the test configures as install.pypi_index.
// Wheels are served from a working copy, so a test may change one byte of one and see it refused.
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

export interface PypiIndexStandIn {
  /** The index's URL, e.g. http://127.0.0.2:40123/simple/ */
  url: string;
  requests: string[];
  /** Flips one byte in the middle of the served copy of a wheel (its published sha256 stays). */
  tamper(file: string): void;
  restore(file: string): void;
  close(): Promise<void>;
}

const normalized = (name: string) => name.toLowerCase().replace(/[-_.]+/g, "-");

/** Serves `wheels` (paths of .whl files) on `host`; each is listed under the project its file name names. */
export async function startPypiIndex(wheels: string[], host = "127.0.0.2"): Promise<PypiIndexStandIn> {
  const served = mkdtempSync(join(tmpdir(), "pc-pypi-index-"));
  const originals = new Map<string, string>();
  const projects = new Map<string, Array<{ filename: string; sha256: string }>>();
  for (const wheel of wheels) {
    const file = basename(wheel);
    copyFileSync(wheel, join(served, file));
    originals.set(file, wheel);
    const project = normalized(file.split("-")[0]!);
    const sha256 = createHash("sha256").update(readFileSync(wheel)).digest("hex");
    projects.set(project, [...(projects.get(project) ?? []), { filename: file, sha256 }]);
  }
  const requests: string[] = [];
  let base = "";
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    requests.push(path);
    const page = /^\/simple\/([a-z0-9-]+)\/$/.exec(path);
    if (page) {
      const files = projects.get(page[1]!);
      if (!files) {
        res.writeHead(404).end();
        return;
      }
      const body = {
        meta: { "api-version": "1.0" },
        name: page[1],
        files: files.map((f) => ({
          filename: f.filename,
          url: `${base}/files/${f.filename}`,
          hashes: { sha256: f.sha256 },
        })),
      };
      res.writeHead(200, { "content-type": "application/vnd.pypi.simple.v1+json" }).end(JSON.stringify(body));
      return;
    }
    const file = /^\/files\/([A-Za-z0-9._+!-]+\.whl)$/.exec(path);
    if (file && originals.has(file[1]!)) {
      const bytes = readFileSync(join(served, file[1]!));
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/simple/`,
    requests,
    tamper(file) {
      const bytes = readFileSync(originals.get(file)!);
      bytes[bytes.length >> 1] ^= 0x01;
      writeFileSync(join(served, file), bytes);
    },
    restore(file) {
      copyFileSync(originals.get(file)!, join(served, file));
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      rmSync(served, { recursive: true, force: true });
    },
  };
}
