// REST calls to the gateway (docs/protocol.md "REST endpoints"). The token goes in the
// Authorization header, never in a URL.
import type {
  Auth,
  DocumentSummary,
  InboxItem,
  MemoryRecord,
  SearchHit,
  SessionOverview,
  SessionView,
  UserDocument,
} from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(auth: Auth | null, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = `Bearer ${auth.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const resp = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  const json: unknown = text ? JSON.parse(text) : {};
  if (!resp.ok) {
    const detail = (json as { detail?: unknown }).detail;
    if (detail && typeof detail === "object" && !Array.isArray(detail)) {
      const d = detail as { errorMessage?: string; reason?: string };
      throw new ApiError(resp.status, d.reason ?? "error", d.errorMessage ?? resp.statusText);
    }
    throw new ApiError(resp.status, "error", typeof detail === "string" ? detail : resp.statusText);
  }
  return json as T;
}

const enc = encodeURIComponent;

interface TokenView {
  token: string;
  userId: string;
  tenantId: string;
  expiresAt: number;
}

function toAuth(r: TokenView): Auth {
  return {
    tenant: r.tenantId,
    userId: r.userId,
    token: r.token,
    issuedAt: Date.now(),
    expiresAt: r.expiresAt,
  };
}

export async function login(tenant: string, username: string, password: string): Promise<Auth> {
  return toAuth(
    await call<TokenView>(null, "POST", `/brain/${enc(tenant)}/access/${enc(username)}`, {
      password,
    }),
  );
}

/** A new token with a full lifetime (the old one stays valid until it expires). */
export async function refresh(auth: Auth): Promise<Auth> {
  return toAuth(await call<TokenView>(auth, "POST", `/brain/${enc(auth.tenant)}/access/refresh`));
}

/** Revokes the token on the server (signing out). */
export async function logout(auth: Auth): Promise<void> {
  await call(auth, "POST", `/brain/${enc(auth.tenant)}/access/logout`);
}

export interface ListFilter {
  statuses: string[];
  projectId: string;
  includeArchived: boolean;
  tags?: string[];
  /** Tenant admins only: another user's sessions. */
  ownerUserId?: string;
}

function query(f: ListFilter, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams(extra);
  for (const s of f.statuses) q.append("status", s);
  for (const t of f.tags ?? []) q.append("tag", t);
  if (f.ownerUserId) q.set("ownerUserId", f.ownerUserId);
  if (f.projectId) q.set("projectId", f.projectId);
  if (f.includeArchived) q.set("includeArchived", "true");
  return q.toString();
}

export async function listSessions(auth: Auth, f: ListFilter): Promise<SessionView[]> {
  const r = await call<{ sessions: SessionView[] }>(
    auth,
    "GET",
    `/brain/${enc(auth.tenant)}/sessions?${query(f)}`,
  );
  return r.sessions;
}

export async function searchSessions(auth: Auth, q: string, f: ListFilter): Promise<SearchHit[]> {
  const r = await call<{ hits: SearchHit[] }>(
    auth,
    "GET",
    `/brain/${enc(auth.tenant)}/sessions/search?${query(f, { q })}`,
  );
  return r.hits;
}

export async function getSession(auth: Auth, id: string): Promise<SessionView> {
  return call<SessionView>(auth, "GET", `/brain/${enc(auth.tenant)}/session/${enc(id)}`);
}

export async function getOverview(auth: Auth, id: string): Promise<SessionOverview> {
  return call<SessionOverview>(auth, "GET", `/brain/${enc(auth.tenant)}/session/${enc(id)}/overview`);
}

/** Whether the token carries the tenant admin role (its claims are readable, not secret). */
export function isAdmin(auth: Auth): boolean {
  try {
    const part = auth.token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(part)) as { roles?: string[] };
    return (claims.roles ?? []).includes("admin");
  } catch {
    return false;
  }
}

export async function patchMetadata(
  auth: Auth,
  id: string,
  patch: { title?: string; tags?: string[]; pinned?: boolean },
): Promise<SessionView> {
  return call<SessionView>(
    auth,
    "PATCH",
    `/brain/${enc(auth.tenant)}/session/${enc(id)}/metadata`,
    patch,
  );
}

export type LifecycleOp = "archive" | "reactivate" | "resume" | "extend";

export async function lifecycle(
  auth: Auth,
  id: string,
  op: LifecycleOp,
  body: Record<string, unknown> = {},
): Promise<unknown> {
  return call(auth, "POST", `/brain/${enc(auth.tenant)}/session/${enc(id)}/${op}`, body);
}

export async function deleteSession(auth: Auth, id: string): Promise<unknown> {
  return call(auth, "DELETE", `/brain/${enc(auth.tenant)}/session/${enc(id)}`);
}

export async function listInbox(auth: Auth): Promise<InboxItem[]> {
  const r = await call<{ items: InboxItem[] }>(auth, "GET", `/brain/${enc(auth.tenant)}/inbox`);
  return r.items;
}

export async function markInbox(auth: Auth, id: string, read: boolean): Promise<unknown> {
  return call(auth, "POST", `/brain/${enc(auth.tenant)}/inbox/${enc(id)}/mark`, { read });
}

export async function answerInbox(auth: Auth, id: string, answer: string): Promise<unknown> {
  return call(auth, "POST", `/brain/${enc(auth.tenant)}/inbox/${enc(id)}/answer`, { answer });
}

export async function listDocuments(auth: Auth): Promise<DocumentSummary[]> {
  const r = await call<{ documents: DocumentSummary[] }>(auth, "GET", `/brain/${enc(auth.tenant)}/documents`);
  return r.documents;
}

export async function readDocument(auth: Auth, path: string): Promise<UserDocument> {
  // Each segment encoded on its own: the route takes the path with its slashes.
  const p = path.split("/").map(enc).join("/");
  return call<UserDocument>(auth, "GET", `/brain/${enc(auth.tenant)}/documents/${p}`);
}

export async function listProjectMemory(auth: Auth, project: string): Promise<MemoryRecord[]> {
  const path = `/brain/${enc(auth.tenant)}/projects/${enc(project)}/memory`;
  return (await call<{ records: MemoryRecord[] }>(auth, "GET", path)).records;
}

export async function deleteProjectMemory(auth: Auth, project: string, id: string): Promise<void> {
  const path = `/brain/${enc(auth.tenant)}/projects/${enc(project)}/memory/${enc(id)}`;
  await call<unknown>(auth, "DELETE", path);
}
