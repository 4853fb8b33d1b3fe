// How an egress broker answers a refusal: one status per stable code, the code in a header
// (X-PersonalClaw-Egress) a client can branch on, and a one-line body naming why (never a
// placeholder or a secret's value: the reasons name the secret, the host and the place).
import type http from "node:http";
import type net from "node:net";

export type EgressCode =
  | "egress_not_declared"
  | "egress_address_refused"
  | "egress_unresolvable"
  | "egress_connect_failed"
  | "egress_busy"
  | "egress_bad_request"
  | "egress_tls_failed"
  | "secret_misdirected"
  | "secret_unavailable"
  | "secret_answer_unmaskable";

/** The status each refusal answers with. */
const STATUS: Record<EgressCode, [number, string]> = {
  egress_not_declared: [403, "Forbidden"],
  egress_address_refused: [403, "Forbidden"],
  egress_unresolvable: [502, "Bad Gateway"],
  egress_connect_failed: [502, "Bad Gateway"],
  egress_busy: [429, "Too Many Requests"],
  egress_bad_request: [400, "Bad Request"],
  egress_tls_failed: [502, "Bad Gateway"],
  secret_misdirected: [403, "Forbidden"],
  secret_unavailable: [503, "Service Unavailable"],
  secret_answer_unmaskable: [502, "Bad Gateway"],
};

/** Sends a refusal's status, headers and body the one way its request allows. */
export type Answer = (code: EgressCode, reason: string) => void;

function refusalBody(code: EgressCode, reason: string): string {
  return `${code}: ${reason}\n`;
}

/** A refusal answered on a raw socket: a CONNECT, or a request Node could not parse. */
export function rawAnswer(socket: net.Socket): Answer {
  return (code, reason) => {
    const body = refusalBody(code, reason);
    const [status, text] = STATUS[code];
    if (!socket.writable) return void socket.destroy();
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nX-PersonalClaw-Egress: ${code}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}

/** A refusal answered through Node's response to a parsed request. */
export function responseAnswer(res: http.ServerResponse): Answer {
  return (code, reason) => {
    if (res.headersSent) return void res.destroy();
    const body = refusalBody(code, reason);
    res.writeHead(STATUS[code][0], {
      "Content-Type": "text/plain",
      "X-PersonalClaw-Egress": code,
      "Content-Length": Buffer.byteLength(body),
      Connection: "close",
    });
    res.end(body);
  };
}
