// A minimal WebSocket client over node:http (RFC 6455, text frames only), for the end-to-end
// suite and the bench: Node 20 has no WebSocket without a flag, and a raw client can send the
// headers a browser would (Origin) or would not (Authorization) and read a refused upgrade.
import { request } from "node:http";
import { randomBytes, createHash } from "node:crypto";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/**
 * Opens a socket to ws://127.0.0.1:<port><path>. Resolves `{ok: true, socket}` on 101, or
 * `{ok: false, status, body}` when the upgrade is refused.
 */
export function openWebSocket(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const key = randomBytes(16).toString("base64");
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": key,
        ...headers,
      },
    });
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ ok: false, status: res.statusCode ?? 0, body }));
    });
    req.on("upgrade", (res, socket, head) => {
      const accept = createHash("sha1")
        .update(key + GUID)
        .digest("base64");
      if (res.headers["sec-websocket-accept"] !== accept) {
        socket.destroy();
        reject(new Error("bad Sec-WebSocket-Accept"));
        return;
      }
      resolve({
        ok: true,
        status: 101,
        protocol: res.headers["sec-websocket-protocol"] ?? null,
        socket: new FrameSocket(socket, head),
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** Frames in and out of one upgraded socket: `onText`, `close`, and a promise of the close. */
class FrameSocket {
  constructor(socket, head) {
    this.socket = socket;
    this.buffer = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
    this.listeners = [];
    this.closeCode = null;
    // Settles at the peer's close frame (with its code) or when the connection ends (1006 without one).
    this.closed = new Promise((resolve) => {
      this.settleClosed = resolve;
      socket.on("close", () => resolve(this.closeCode ?? 1006));
    });
    socket.on("data", (chunk) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      this.drain();
    });
    socket.on("error", () => {});
    if (this.buffer.length) queueMicrotask(() => this.drain());
  }

  /** Calls `fn(text)` for every text frame, in order. */
  onText(fn) {
    this.listeners.push(fn);
    // Frames that arrived before anyone listened (the hub's hello rides in with the upgrade).
    const early = this.early ?? [];
    this.early = null;
    for (const text of early) fn(text);
  }

  drain() {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const opcode = b[0] & 0x0f;
      let length = b[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        length = Number(b.readBigUInt64BE(2));
        offset = 10;
      }
      if (b.length < offset + length) return;
      const payload = b.subarray(offset, offset + length);
      this.buffer = b.subarray(offset + length);
      if (opcode === 1) {
        const text = payload.toString("utf8");
        if (this.listeners.length === 0) (this.early ??= []).push(text);
        for (const fn of this.listeners) fn(text);
      } else if (opcode === 8) {
        this.closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.settleClosed(this.closeCode);
        this.sendFrame(8, payload.subarray(0, 2));
        this.socket.end();
      } else if (opcode === 9) {
        this.sendFrame(10, payload);
      }
    }
  }

  sendFrame(opcode, payload) {
    const mask = randomBytes(4);
    const header =
      payload.length < 126
        ? Buffer.from([0x80 | opcode, 0x80 | payload.length])
        : Buffer.from([0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const masked = Buffer.alloc(payload.length);
    for (let i = 0; i < payload.length; i++) masked[i] = payload[i] ^ mask[i % 4];
    if (!this.socket.destroyed) this.socket.write(Buffer.concat([header, mask, masked]));
  }

  send(text) {
    this.sendFrame(1, Buffer.from(text, "utf8"));
  }

  /** Sends a close frame and waits for the socket to end. */
  close(code = 1000) {
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.sendFrame(8, payload);
    setTimeout(() => this.socket.destroy(), 1000).unref();
    return this.closed;
  }
}
