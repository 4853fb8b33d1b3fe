// Types of ws-client.mjs for the TypeScript suites that use it.
import type { Socket } from "node:net";

export interface FrameSocket {
  socket: Socket;
  closed: Promise<number | null>;
  onText(fn: (text: string) => void): void;
  send(text: string): void;
  close(code?: number): Promise<number | null>;
}

export type Opened =
  { ok: true; status: 101; protocol: string | null; socket: FrameSocket } | { ok: false; status: number; body: string };

export function openWebSocket(port: number, path: string, headers?: Record<string, string>): Promise<Opened>;
