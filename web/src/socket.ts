// One WebSocket to the gateway that reconnects by itself. The token travels as a subprotocol
// (`vance.bearer.<token>`), never in the URL. Requests are matched to replies by `replyTo`;
// pushed frames go to `onPush`. After every (re)connect `onReady` runs, where the chat re-binds
// its session with `session-resume` from the last seq it saw (see chat.ts).
import type { Frame } from "./types";

export class FrameError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

type Pending = { resolve: (d: Record<string, unknown>) => void; reject: (e: Error) => void };

export type LinkState = "connecting" | "open" | "offline" | "closed";

export interface SocketHooks {
  onPush: (frame: Frame) => void;
  onReady: () => void | Promise<void>;
  onState: (state: LinkState, detail?: string) => void;
  onAuthFailed: (reason: string) => void;
}

const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

export class Socket {
  private ws: WebSocket | null = null;
  private pending = new Map<string, Pending>();
  private nextId = 1;
  private attempt = 0;
  private stopped = false;
  private pingTimer: number | undefined;
  private retryTimer: number | undefined;

  constructor(
    private readonly tenant: string,
    /** Read at every (re)connect: the app refreshes the token while the chat is open. */
    private readonly token: () => string,
    private readonly hooks: SocketHooks,
  ) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  /** Closes for good (sign out, leaving the chat): no reconnect. */
  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.retryTimer);
    window.clearInterval(this.pingTimer);
    this.ws?.close(1000, "client closed");
    this.ws = null;
    this.failPending("closed");
    this.hooks.onState("closed");
  }

  /** Drops the socket as a network failure would; the client reconnects (used by the UI's
   *  "reconnect" action and useful when a browser keeps a dead socket after sleep). */
  drop(): void {
    this.ws?.close(4000, "client reconnect");
  }

  request(type: string, data: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new FrameError(0, "offline", "not connected; retrying"));
    }
    const id = `c${this.nextId++}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, type, data }));
    });
  }

  private connect(): void {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const url = `${scheme}://${location.host}/brain/${encodeURIComponent(this.tenant)}/ws`;
    this.hooks.onState("connecting");
    const ws = new WebSocket(url, ["vance.v1", `vance.bearer.${this.token()}`]);
    this.ws = ws;
    ws.onmessage = (ev: MessageEvent<string>) => this.receive(ws, ev.data);
    ws.onclose = (ev: CloseEvent) => this.closed(ws, ev);
  }

  private receive(ws: WebSocket, raw: string): void {
    if (ws !== this.ws) return;
    const frame = JSON.parse(raw) as Frame;
    if (frame.type === "welcome") {
      this.attempt = 0;
      const server = frame.data.server as { pingInterval?: number } | undefined;
      const every = Math.max(5, server?.pingInterval ?? 30) * 1000;
      window.clearInterval(this.pingTimer);
      // The gateway never pings; our frames keep the session's bind alive.
      this.pingTimer = window.setInterval(() => {
        this.request("ping", { clientTimestamp: Date.now() }).catch(() => undefined);
      }, every);
      this.hooks.onState("open");
      void this.hooks.onReady();
      return;
    }
    if (frame.replyTo) {
      const p = this.pending.get(frame.replyTo);
      if (p) {
        this.pending.delete(frame.replyTo);
        if (frame.type === "error") {
          const d = frame.data as { errorCode?: number; reason?: string; errorMessage?: string };
          p.reject(new FrameError(d.errorCode ?? 500, d.reason ?? "error", d.errorMessage ?? ""));
        } else {
          p.resolve(frame.data);
        }
      }
      return;
    }
    this.hooks.onPush(frame);
  }

  private closed(ws: WebSocket, ev: CloseEvent): void {
    if (ws !== this.ws) return;
    this.ws = null;
    window.clearInterval(this.pingTimer);
    this.failPending("disconnected");
    if (this.stopped) return;
    if (ev.code === 4401 || ev.code === 4403) {
      this.stopped = true;
      this.hooks.onState("closed", ev.reason);
      this.hooks.onAuthFailed(ev.reason || "signed out");
      return;
    }
    if (ev.code === 4409) {
      // Another connection holds the session's bind: fighting over it would loop.
      this.stopped = true;
      this.hooks.onState("closed", "This session was opened in another window.");
      return;
    }
    const delay = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt += 1;
    this.hooks.onState("offline", ev.reason || `reconnecting in ${Math.round(delay / 100) / 10} s`);
    this.retryTimer = window.setTimeout(() => this.connect(), delay);
  }

  private failPending(why: string): void {
    for (const p of this.pending.values()) p.reject(new FrameError(0, why, why));
    this.pending.clear();
  }
}
