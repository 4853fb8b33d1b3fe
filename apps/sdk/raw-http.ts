// Test helper: one HTTP/1.1 request written byte for byte over a socket, so a test can send
// what a well-behaved client library would not: a header twice, a raw non-ASCII target, a
// chunked body split where the test says.
import { connect } from "node:net";

export type RawResponse = { status: number; headers: Record<string, string>; body: Buffer };

export async function rawRequest(
  port: number,
  req: { method: string; target: string; headers?: Array<[string, string]>; body?: Uint8Array; chunks?: Uint8Array[] },
): Promise<RawResponse> {
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close"];
  for (const [k, v] of req.headers ?? []) lines.push(`${k}: ${v}`);
  const parts: Buffer[] = [];
  if (req.chunks) {
    lines.push("Transfer-Encoding: chunked");
    parts.push(Buffer.from(lines.join("\r\n") + "\r\n\r\n", "utf8"));
    for (const c of req.chunks)
      parts.push(Buffer.from(c.length.toString(16) + "\r\n"), Buffer.from(c), Buffer.from("\r\n"));
    parts.push(Buffer.from("0\r\n\r\n"));
  } else {
    const body = Buffer.from(req.body ?? new Uint8Array());
    if (body.length > 0 || !["GET", "HEAD"].includes(req.method)) lines.push(`Content-Length: ${body.length}`);
    parts.push(Buffer.from(lines.join("\r\n") + "\r\n\r\n", "utf8"), body);
  }
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    const socket = connect(port, "127.0.0.1", () => socket.write(Buffer.concat(parts)));
    socket.on("data", (d) => received.push(d));
    // A server may close a refused request before reading its body; the answer is already in.
    socket.on("error", (err: NodeJS.ErrnoException) =>
      received.length && err.code === "ECONNRESET" ? undefined : reject(err),
    );
    socket.on("close", () => {
      const all = Buffer.concat(received);
      const split = all.indexOf("\r\n\r\n");
      if (split === -1) return reject(new Error(`no HTTP answer: ${JSON.stringify(all.toString("latin1"))}`));
      const [statusLine, ...headerLines] = all.subarray(0, split).toString("latin1").split("\r\n");
      const headers: Record<string, string> = {};
      for (const h of headerLines) {
        const i = h.indexOf(":");
        headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
      }
      let body: Buffer = all.subarray(split + 4);
      if (headers["transfer-encoding"] === "chunked") body = dechunk(body);
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
  });
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf("\r\n", at);
    const size = parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!size) return Buffer.concat(out);
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
