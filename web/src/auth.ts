// The sign-in is kept in localStorage (so a reload or a new tab stays signed in) and never put
// in a URL: the WebSocket gets the token as a subprotocol, REST calls as a Bearer header.
import type { Auth } from "./types";

const KEY = "vance.auth";

export function loadAuth(): Auth | null {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw) return null;
    const a = JSON.parse(raw) as Auth;
    return a.token && a.tenant && a.expiresAt > Date.now() ? a : null;
  } catch {
    return null;
  }
}

export function saveAuth(a: Auth | null): void {
  if (a) localStorage.setItem(KEY, JSON.stringify(a));
  else localStorage.removeItem(KEY);
}
