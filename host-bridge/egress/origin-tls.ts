// The TLS connection an egress broker opens itself to a secret's origin (issue 38). The app
// speaks plain HTTP to its broker, so no certificate authority of ours is ever trusted inside
// the sandbox; the broker verifies the origin's certificate against the system's trust store
// plus the owner's extra authorities (egress.extra_ca_certs, a consented loosening) and never
// sends a request, let alone a secret, over a connection it could not verify.
import { readFileSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";

/** Where distributions keep the system's bundle of trusted authorities, in the order looked for. */
const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/ca-bundle.pem",
  "/etc/pki/tls/cacert.pem",
  "/etc/ssl/cert.pem",
];

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The authorities an origin's certificate is verified against, read once at the bridge's start. */
export interface OriginTrust {
  ca: readonly string[];
  /**
   * The authorities parsed once into a TLS context every origin connection shares: parsing ~150
   * PEM certificates per connection cost ~25 ms of a small request (measured, bench section
   * `secrets`).
   */
  context: tls.SecureContext;
  /** What was read, for the bridge's log: the system bundle and the owner's extra file. */
  notes: string[];
}

function certificatesIn(path: string): string[] {
  return readFileSync(path, "utf8").match(PEM_CERTIFICATE) ?? [];
}

/**
 * The system's trust store (SSL_CERT_FILE when the owner's system moved it, else the first
 * bundle found, else Node's own copy of Mozilla's) plus the certificates of `extraCaFile`. An
 * extra file that cannot be read or holds no certificate adds nothing and is named in the notes:
 * origins then verify against fewer authorities, never more.
 */
export function loadOriginTrust(opts: { extraCaFile: string; systemCaFile?: string | undefined }): OriginTrust {
  const notes: string[] = [];
  let system: string[] = [];
  for (const path of [opts.systemCaFile, ...SYSTEM_BUNDLES]) {
    if (!path) continue;
    try {
      system = certificatesIn(path);
    } catch {
      continue;
    }
    if (system.length > 0) {
      notes.push(`${system.length} system authorities from ${path}`);
      break;
    }
  }
  if (system.length === 0) {
    system = [...tls.rootCertificates];
    notes.push(`no system bundle found: Node's ${system.length} bundled authorities`);
  }
  let extra: string[] = [];
  if (opts.extraCaFile !== "") {
    try {
      extra = certificatesIn(opts.extraCaFile);
      notes.push(
        extra.length > 0
          ? `${extra.length} extra authorities from ${opts.extraCaFile} (egress.extra_ca_certs)`
          : `egress.extra_ca_certs ${opts.extraCaFile} holds no PEM certificate; none added`,
      );
    } catch (error) {
      notes.push(`egress.extra_ca_certs ${opts.extraCaFile} cannot be read (${(error as Error).message}); none added`);
    }
  }
  const ca = [...system, ...extra];
  return { ca, context: tls.createSecureContext({ ca }), notes };
}

/** The trust of `loadOriginTrust`, read once when first asked (at a broker's first secret), its notes logged. */
export function originTrustOf(
  extraCaFile: string,
  systemCaFile: string | undefined,
  log: (line: string) => void,
): () => OriginTrust {
  let trust: OriginTrust | null = null;
  return () => {
    if (trust) return trust;
    trust = loadOriginTrust({ extraCaFile, systemCaFile });
    log(`bridge: secret origins are verified against ${trust.notes.join("; ")}`);
    return trust;
  };
}

/**
 * TLS over an already dialled (and vetted) connection to `host`: the certificate must chain to
 * `trust` and name `host` (SNI too, unless it is an address). Resolves once the handshake
 * verified; rejects with the reason otherwise.
 */
export function secureOrigin(socket: net.Socket, host: string, trust: OriginTrust): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const secured = tls.connect({
      socket,
      host,
      ...(net.isIP(host) === 0 ? { servername: host } : {}),
      secureContext: trust.context,
      rejectUnauthorized: true,
      ALPNProtocols: ["http/1.1"],
    });
    secured.setNoDelay(true);
    secured.once("secureConnect", () => resolve(secured));
    secured.once("error", (error) => {
      secured.destroy();
      reject(error);
    });
  });
}
