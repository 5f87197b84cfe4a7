// Where the signed-in token lives: this tab's sessionStorage (gone when the tab closes),
// never localStorage or a cookie. If sessionStorage is unavailable, memory only.

import type { Credentials } from "./api";

const KEY = "kb.console.credentials";

function store(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

export function loadCredentials(): Credentials | null {
  const raw = store()?.getItem(KEY);
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<Credentials>;
    if (typeof value.bot === "string" && typeof value.token === "string") return { bot: value.bot, token: value.token };
  } catch {
    // fall through: a damaged entry is dropped
  }
  store()?.removeItem(KEY);
  return null;
}

export function saveCredentials(c: Credentials): void {
  store()?.setItem(KEY, JSON.stringify(c));
}

export function clearCredentials(): void {
  store()?.removeItem(KEY);
}
