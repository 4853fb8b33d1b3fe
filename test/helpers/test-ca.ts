// A certificate authority made for one test run (openssl, P-256, two days) and a server
// certificate it signs for the names and addresses a local TLS upstream answers as. Nothing
// of it is trusted anywhere but where a test hands the CA's PEM (egress.extra_ca_certs).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCertificates {
  /** The folder holding the files below. */
  dir: string;
  /** The CA's certificate (PEM) and its path, as the owner would name it in egress.extra_ca_certs. */
  caPem: string;
  caPath: string;
  /** The server's key and certificate, for tls.createServer. */
  key: string;
  cert: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A fresh CA and a server certificate signed by it for `names` (DNS names) and `addresses` (IP SANs). */
export function makeTestCertificates(opts: { names?: string[]; addresses?: string[] }): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "pc-test-ca-"));
  const curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(dir, [
    "req",
    "-x509",
    ...curve,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=PersonalClaw test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  openssl(dir, ["req", ...curve, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=test origin"]);
  const san = [...(opts.names ?? []).map((n) => `DNS:${n}`), ...(opts.addresses ?? []).map((a) => `IP:${a}`)];
  writeFileSync(
    join(dir, "server.ext"),
    `subjectAltName=${san.join(",")}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
  return {
    dir,
    caPem: readFileSync(join(dir, "ca.pem"), "utf8"),
    caPath: join(dir, "ca.pem"),
    key: readFileSync(join(dir, "server.key"), "utf8"),
    cert: readFileSync(join(dir, "server.pem"), "utf8"),
  };
}

/** A certificate and its key, as files a signer names (`openssl cms -signer ... -inkey ...`). */
export interface SignerFiles {
  certPath: string;
  keyPath: string;
  certPem: string;
}

/**
 * A code-signing certificate for `commonName`, signed by the test CA (`ca`), or self-signed when
 * `ca` is null: a publisher no authority of the run vouches for.
 */
export function makeCodeSigningCertificate(
  ca: Pick<TestCertificates, "dir" | "caPath"> | null,
  commonName: string,
  opts: { purpose?: string } = {},
): SignerFiles {
  const dir = mkdtempSync(join(tmpdir(), "pc-test-signer-"));
  const curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  const purpose = opts.purpose ?? "codeSigning";
  const usage = `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=${purpose}\n`;
  writeFileSync(join(dir, "signer.ext"), usage);
  if (ca === null) {
    openssl(dir, [
      "req",
      "-x509",
      ...curve,
      "-keyout",
      "signer.key",
      "-out",
      "signer.pem",
      "-days",
      "2",
      "-subj",
      `/CN=${commonName}`,
      "-addext",
      `extendedKeyUsage=${purpose}`,
    ]);
  } else {
    openssl(dir, ["req", ...curve, "-keyout", "signer.key", "-out", "signer.csr", "-subj", `/CN=${commonName}`]);
    openssl(dir, [
      "x509",
      "-req",
      "-in",
      "signer.csr",
      "-CA",
      ca.caPath,
      "-CAkey",
      join(ca.dir, "ca.key"),
      "-CAcreateserial",
      "-CAserial",
      join(dir, "ca.srl"),
      "-out",
      "signer.pem",
      "-days",
      "2",
      "-extfile",
      "signer.ext",
    ]);
  }
  return {
    certPath: join(dir, "signer.pem"),
    keyPath: join(dir, "signer.key"),
    certPem: readFileSync(join(dir, "signer.pem"), "utf8"),
  };
}

/** An intermediate authority the test CA issues: pass it as the `ca` of makeCodeSigningCertificate. */
export function makeIntermediateCa(ca: TestCertificates, commonName: string): Pick<TestCertificates, "dir" | "caPath"> {
  const dir = mkdtempSync(join(tmpdir(), "pc-test-intermediate-"));
  const curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  writeFileSync(join(dir, "ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
  openssl(dir, ["req", ...curve, "-keyout", "ca.key", "-out", "ca.csr", "-subj", `/CN=${commonName}`]);
  // prettier-ignore
  openssl(dir, ["x509", "-req", "-in", "ca.csr", "-CA", ca.caPath, "-CAkey", join(ca.dir, "ca.key"), "-CAcreateserial", "-CAserial", join(dir, "root.srl"), "-out", "ca.pem", "-days", "2", "-extfile", "ca.ext"]);
  return { dir, caPath: join(dir, "ca.pem") };
}
