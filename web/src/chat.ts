// The live state of one session's chat, built from the gateway's pushed frames.
//
// Every pushed session event has a `seq`; the highest one applied is kept in `lastSeq` and a
// reconnect resumes with `sinceSeq = lastSeq`, so nothing is missed. A frame at or below
// `lastSeq` is ignored and messages are also keyed by `chatMessageId`, so nothing shows twice.
// A reload starts from seq 0: the persisted events (messages, statuses) are replayed, and the
// stream chunks of a turn still running come back from the gateway's replay window.
import { reactive } from "vue";
import { applyPlanFrame, PLAN_FRAMES, type PlanState } from "./plans";
import type {
  ChatMessage,
  ForwardedBy,
  Frame,
  ProcessInfo,
  ProcessStatus,
  SwitchTo,
} from "./types";

export interface PendingInput {
  key: string;
  processName: string;
  content: string;
  outcome: string;
  /** The hub question this answers (an option clicked under a relayed question). */
  askId?: string;
}

/** A worker's side-channel frame a hub engine forwarded (`forwardedBy`), as one line. */
export interface ForwardedLine {
  seq: number;
  processName: string;
  engine: string;
  sessionId: string;
  text: string;
  by: ForwardedBy;
}

export interface ChatState {
  sessionId: string;
  projectId: string;
  chatProcessName: string;
  lastSeq: number;
  messages: ChatMessage[];
  /** Text streamed by a running turn, by process id, until its message is appended. */
  streams: Record<string, { processName: string; text: string }>;
  processes: Record<string, ProcessInfo>;
  pending: PendingInput[];
  switchTo: SwitchTo | null;
  /** The seq of the newest `switch-to` frame (0: none); the view switches once per seq. */
  switchSeq: number;
  /** Counts `inbox-item-added` frames: the inbox panel reloads when it changes. */
  inboxAdded: number;
  /** Forwarded worker activity, newest last (the last FORWARDED_KEPT lines). */
  forwarded: ForwardedLine[];
  /** Processes asked to pause while RUNNING: they pause when their turn ends (by id). */
  pausing: Record<string, boolean>;
  /** The newest plan of each process (plan mode, plans.ts), by process id. */
  plans: Record<string, PlanState>;
}

const FORWARDED_KEPT = 30;

export function newChat(): ChatState {
  return reactive({
    sessionId: "",
    projectId: "",
    chatProcessName: "chat",
    lastSeq: 0,
    messages: [],
    streams: {},
    processes: {},
    pending: [],
    switchTo: null,
    switchSeq: 0,
    inboxAdded: 0,
    forwarded: [],
    pausing: {},
    plans: {},
  });
}

export function applyFrame(s: ChatState, f: Frame): void {
  if (typeof f.seq === "number") {
    if (f.seq <= s.lastSeq) return;
    s.lastSeq = f.seq;
  }
  if (PLAN_FRAMES.has(f.type)) {
    applyPlanFrame(s.plans, f);
    return;
  }
  switch (f.type) {
    case "chat-message-appended":
      appendMessage(s, f.data as unknown as ChatMessage);
      break;
    case "chat-message-stream-chunk": {
      const d = f.data as { thinkProcessId: string; processName: string; chunk: string };
      const cur = s.streams[d.thinkProcessId];
      s.streams[d.thinkProcessId] = {
        processName: d.processName,
        text: (cur?.text ?? "") + d.chunk,
      };
      break;
    }
    case "process-progress":
      // A worker of another session that the hub engine observes: its own line, never a
      // process of this session's tree.
      if (f.forwardedBy) forwardedLine(s, f, f.forwardedBy);
      else progress(s, f.data);
      break;
    case "switch-to":
      s.switchTo = f.data as unknown as SwitchTo;
      s.switchSeq = f.seq ?? s.switchSeq + 1;
      break;
    case "inbox-item-added":
      s.inboxAdded++;
      break;
    case "engine-halt-requested": {
      // Every client of the session learns which engine will pause at its turn's end (seed
      // 002 §5, ENGINE_HALT_REQUESTED), not only the one that pressed Esc.
      const d = f.data as { processId: string };
      if (s.processes[d.processId]?.status === "RUNNING") s.pausing[d.processId] = true;
      break;
    }
  }
}

function appendMessage(s: ChatState, m: ChatMessage): void {
  if (s.messages.some((x) => x.chatMessageId === m.chatMessageId)) return;
  s.messages.push({ ...m, meta: m.meta ?? {} });
  if (m.role === "assistant") delete s.streams[m.thinkProcessId];
  if (m.role === "user") {
    const i = s.pending.findIndex((p) => p.processName === m.processName && p.content === m.content);
    if (i >= 0) s.pending.splice(i, 1);
  }
}

function forwardedLine(s: ChatState, f: Frame, by: ForwardedBy): void {
  const d = f.data;
  s.forwarded.push({
    seq: f.seq ?? 0,
    processName: (d.processName as string) ?? "",
    engine: (d.engine as string) ?? "",
    sessionId: (d.sessionId as string) ?? "",
    text: describeProgress(d),
    by,
  });
  if (s.forwarded.length > FORWARDED_KEPT) s.forwarded.splice(0, s.forwarded.length - FORWARDED_KEPT);
}

/** A progress frame in a few words: a status change, a tool step, or its payload's fields. */
export function describeProgress(d: Record<string, unknown>): string {
  if (typeof d.status === "string") return `now ${d.status}`;
  const p = (d.payload ?? {}) as Record<string, unknown>;
  if (typeof p.tool === "string") return `tool ${p.tool}${p.state ? ` ${String(p.state)}` : ""}`;
  const fields = Object.entries(p)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
  return `${String(d.kind ?? "progress").toLowerCase()}${fields ? ` (${fields})` : ""}`;
}

function progress(s: ChatState, d: Record<string, unknown>): void {
  // Status changes carry `status`; a tool step (kind STATUS, `payload.tool`) does not.
  if (d.kind !== "STATUS" || typeof d.status !== "string") return;
  const id = d.processId as string;
  const status = d.status as ProcessStatus;
  const prev = s.processes[id];
  s.processes[id] = {
    thinkProcessId: id,
    processName: d.processName as string,
    engine: (d.engine as string) ?? prev?.engine ?? "",
    parentProcessId: (d.parentProcessId as string | null) ?? null,
    status,
    closeReason: (d.closeReason as string | null) ?? null,
    closeDetail: (d.closeDetail as string | null) ?? null,
  };
  // A turn that ended without an appended message (failed, stopped) leaves no overlay behind.
  if (status !== "RUNNING") {
    delete s.streams[id];
    delete s.pausing[id];
  }
}

// Closes the user asked for or that finished the work: nothing to explain.
const QUIET_CLOSES = new Set(["DONE", "STOPPED"]);

export interface CloseNotice {
  title: string;
  detail: string;
}

/** Why a closed process ended, as the chat tells the user, or null when there is nothing to
 *  tell (still open, done, or stopped). The detail is the server's words (an error's message,
 *  never a stack, secrets masked, docs/protocol.md "Close detail"), made readable. */
export function closeNotice(p: ProcessInfo): CloseNotice | null {
  if (p.status !== "CLOSED" || QUIET_CLOSES.has(p.closeReason ?? "")) return null;
  const title =
    p.closeReason === "STALE"
      ? `${p.processName} stopped: its turn failed.`
      : `${p.processName} closed (${(p.closeReason ?? "closed").toLowerCase()}).`;
  return { title, detail: readableDetail(p.closeDetail ?? "") };
}

/** A failure's detail for a reader: the exception class names it quotes mean nothing to one
 *  and are left out, and "turn failed N times: <error>" reads as the error first. */
export function readableDetail(text: string): string {
  let detail = text.replace(/\b[A-Z][A-Za-z]*(?:Error|Exception): /g, "").trim();
  const retried = /^turn failed (\d+) times: ([\s\S]*)$/.exec(detail);
  if (retried) detail = `${retried[2].replace(/\.$/, "")}. Tried ${retried[1]} times.`;
  return detail;
}

/** The notice process_service writes into a chat whose turn failed for good (the chat stays
 *  open, docs/protocol.md "A turn that failed"): its detail, readable, or null for any other
 *  message. */
export function failedTurnDetail(m: ChatMessage): string | null {
  if (m.role !== "system" || m.meta.error !== "turn_failed") return null;
  return readableDetail(typeof m.meta.detail === "string" ? m.meta.detail : m.content);
}

/** Marks the processes a pause found RUNNING (the reply of `process-pause`): the view shows
 *  that the pause is on its way until their turn ends. */
export function notePausing(s: ChatState, processes: ProcessInfo[]): void {
  for (const p of processes) {
    if (p.status === "RUNNING") s.pausing[p.thinkProcessId] = true;
  }
}

/** The question a BLOCKED process waits on: its newest assistant message. */
export function blockedQuestion(s: ChatState, p: ProcessInfo): ChatMessage | undefined {
  if (p.status !== "BLOCKED") return undefined;
  for (let i = s.messages.length - 1; i >= 0; i--) {
    const m = s.messages[i];
    if (m.thinkProcessId === p.thinkProcessId && m.role === "assistant") return m;
  }
  return undefined;
}

export interface TreeNode {
  process: ProcessInfo;
  depth: number;
}

/** Processes in tree order (parents before children), oldest first among siblings. */
export function processTree(s: ChatState): TreeNode[] {
  const all = Object.values(s.processes);
  const ids = new Set(all.map((p) => p.thinkProcessId));
  const out: TreeNode[] = [];
  const walk = (parent: string | null, depth: number): void => {
    for (const p of all) {
      const root = parent === null && (p.parentProcessId === null || !ids.has(p.parentProcessId));
      if (root || (parent !== null && p.parentProcessId === parent)) {
        out.push({ process: p, depth });
        walk(p.thinkProcessId, depth + 1);
      }
    }
  };
  walk(null, 0);
  return out;
}

/** RUNNING when any process runs, else IDLE: the session's roll-up as the chat sees it. */
export function rollUp(s: ChatState): "RUNNING" | "IDLE" {
  return Object.values(s.processes).some((p) => p.status === "RUNNING" || p.status === "INIT")
    ? "RUNNING"
    : "IDLE";
}
