// A small npm registry stand-in for tests that must not depend on a registry: it serves the
// vendored packuments and real published tarballs of test/fixtures/npm-registry/ in the
// registry's own shapes (GET /<name> with a scope's slash escaped, GET <dist.tarball>), on a
// loopback address the test configures as install.npm_registry. Tarballs are served from a
// working copy, so a test may change one byte of one and see it refused.
import { createHash } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./gateway";

export const NPM_FIXTURES = join(repoRoot, "test", "fixtures", "npm-registry");

export interface NpmRegistryStandIn {
  /** The registry's URL, e.g. http://127.0.0.2:40123 */
  url: string;
  /** Every path asked for, in order. */
  requests: string[];
  /**
   * Flips one byte in the middle of a package's tarball (the copy this stand-in serves), once it
   * has been served `afterFetches` more times: 1 lets the resolver see the published bytes and
   * hands the installer the changed ones.
   */
  tamper(name: string, version: string, afterFetches?: number): void;
  /** Serves the vendored bytes again. */
  restore(name: string, version: string): void;
  /**
   * Publishes one more version: `meta` is its packument entry (name, version, dependencies...),
   * `tarball` its bytes; the stand-in fills in dist (tarball URL and sha512 integrity) as a
   * registry does, and tags it latest as `npm publish` does, so a test can make a release the
   * vendored fixtures do not have.
   */
  publish(meta: { name: string; version: string } & Record<string, unknown>, tarball: Buffer): void;
  close(): Promise<void>;
}

interface Packument {
  name: string;
  "dist-tags"?: Record<string, string>;
  versions: Record<string, { dist: { tarball: string } }>;
}

/** The vendored tarball's file name: npm pack's own (`@scope/name` → `scope-name-<version>.tgz`). */
export function tarballFile(name: string, version: string): string {
  return `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`;
}

/** Starts the stand-in on `host` (loopback; 127.0.0.2 by default) at a free port. */
export async function startNpmRegistry(host = "127.0.0.2"): Promise<NpmRegistryStandIn> {
  const served = mkdtempSync(join(tmpdir(), "pc-npm-registry-"));
  for (const file of readdirSync(join(NPM_FIXTURES, "tarballs")))
    copyFileSync(join(NPM_FIXTURES, "tarballs", file), join(served, file));
  const original = (name: string, version: string) =>
    readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(name, version)));
  const tarballKeys = new Map<string, [string, string]>();
  const packuments = new Map<string, Packument>();
  for (const file of readdirSync(join(NPM_FIXTURES, "packuments"))) {
    const packument = JSON.parse(readFileSync(join(NPM_FIXTURES, "packuments", file), "utf8")) as Packument;
    packuments.set(packument.name, packument);
  }
  const requests: string[] = [];
  const pendingTamper = new Map<string, number>();
  const flipped = (name: string, version: string) => {
    const bytes = original(name, version);
    bytes[bytes.length >> 1] ^= 0x01;
    writeFileSync(join(served, tarballFile(name, version)), bytes);
  };
  let base = "";
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    requests.push(path);
    const tarball = /^\/-\/tarballs\/([A-Za-z0-9._-]+\.tgz)$/.exec(path);
    if (tarball) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(served, tarball[1]!));
      } catch {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes);
      const left = pendingTamper.get(tarball[1]!);
      if (left !== undefined) {
        if (left <= 1) {
          pendingTamper.delete(tarball[1]!);
          const [name, version] = tarballKeys.get(tarball[1]!)!;
          flipped(name, version);
        } else pendingTamper.set(tarball[1]!, left - 1);
      }
      return;
    }
    const packument = packuments.get(decodeURIComponent(path.slice(1)));
    if (!packument) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    // The registry's own answer with every tarball on this stand-in, as a mirror rewrites them.
    const answer = structuredClone(packument);
    for (const [version, meta] of Object.entries(answer.versions))
      meta.dist.tarball = `${base}/-/tarballs/${tarballFile(answer.name, version)}`;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  base = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    tamper(name, version, afterFetches = 0) {
      if (afterFetches === 0) return flipped(name, version);
      tarballKeys.set(tarballFile(name, version), [name, version]);
      pendingTamper.set(tarballFile(name, version), afterFetches);
    },
    publish(meta, tarball) {
      writeFileSync(join(served, tarballFile(meta.name, meta.version)), tarball);
      const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
      const packument = packuments.get(meta.name) ?? { name: meta.name, versions: {} };
      packument.versions[meta.version] = { ...meta, dist: { tarball: "", integrity } } as never;
      // As `npm publish` without --tag: the new version is the one tagged latest.
      packument["dist-tags"] = { ...packument["dist-tags"], latest: meta.version };
      packuments.set(meta.name, packument);
    },
    restore(name, version) {
      pendingTamper.delete(tarballFile(name, version));
      writeFileSync(join(served, tarballFile(name, version)), original(name, version));
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      rmSync(served, { recursive: true, force: true });
    },
  };
}
