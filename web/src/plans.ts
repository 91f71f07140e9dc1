// Plan mode as the client sees it (docs/protocol.md "Plan mode"): the newest plan of each
// process, folded from `plan-proposed`, `todos-updated` and `process-mode-changed`. They are
// stored session events, so a reload replays them and the panel comes back as it was. A
// worker's plan a hub forwards carries `forwardedBy`; its decision names the worker's process.
import type { ForwardedBy, Frame } from "./types";

export type TodoStatus = "pending" | "in_progress" | "done" | "skipped";

export interface PlanStep {
  id: string;
  text: string;
  status: TodoStatus;
  project?: string;
}

export interface PlanState {
  processId: string;
  processName: string;
  engine: string;
  planId: string;
  title: string;
  steps: PlanStep[];
  /** plan: waits for a decision; execution: its todos run; normal: over. */
  mode: "plan" | "execution" | "normal";
  /** How it ended, once mode is normal again. */
  outcome: "" | "rejected" | "done";
  forwardedBy: ForwardedBy | null;
}

export const PLAN_FRAMES = new Set(["plan-proposed", "todos-updated", "process-mode-changed"]);

export function applyPlanFrame(plans: Record<string, PlanState>, f: Frame): void {
  const d = f.data as Record<string, unknown>;
  const processId = d.processId as string;
  const planId = d.planId as string;
  if (!processId || !planId) return;
  const cur = plans[processId];
  if (f.type === "plan-proposed") {
    const steps = (d.steps as PlanStep[]).map((s) => ({ ...s, status: "pending" as TodoStatus }));
    plans[processId] = {
      processId,
      processName: (d.processName as string) ?? "",
      engine: (d.engine as string) ?? "",
      planId,
      title: (d.title as string) ?? "",
      steps,
      mode: "plan",
      outcome: "",
      forwardedBy: f.forwardedBy ?? null,
    };
    return;
  }
  if (!cur || cur.planId !== planId) return; // a frame of an older plan
  if (f.type === "todos-updated") {
    cur.steps = (d.todos as PlanStep[]).map((s) => ({ ...s }));
  } else if (f.type === "process-mode-changed") {
    const mode = d.mode as PlanState["mode"];
    if (mode === "normal") cur.outcome = cur.mode === "plan" ? "rejected" : "done";
    cur.mode = mode;
  }
}
