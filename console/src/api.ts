// The only module that talks to the network: every call goes to this page's own origin,
// under /api, with the bot token as a bearer header and nothing else identifying.

export type Credentials = { bot: string; token: string };

export type Source = {
  id: string;
  type: string;
  name: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  visibility: string;
  priority: number;
  weight: number;
  passages: number;
  attempts: number;
  documentsProcessed: number;
  fragmentsProcessed: number;
  documentsFailed: number;
  documentsUnchanged?: number;
  lastIndexedAt: string | null;
  refreshEverySeconds: number | null;
  nextRefreshAt: string | null;
  config: Record<string, unknown>;
  queued?: boolean;
};

export type IndexSummary = {
  builtAt: string | null;
  totalPassages: number;
  embedder: string;
  sources: { id: string; title: string; type: string; status: string; passages: number }[];
};

export type Signals = Record<string, number | string | null>;

export type Excerpt = {
  rank: number;
  sourceId: string;
  sourceType: string;
  documentId: string;
  fragmentId: string;
  title: string | null;
  path: string | null;
  breadcrumb: string | null;
  text: string;
  url: string | null;
  score: number;
  reason: string;
  signals?: Signals;
};

export type Gate = { topic: string | null; passed: boolean; reason: string };

export type Retrieval = {
  retrievalId: string;
  audience: string;
  confidence: number;
  confidenceComponents?: Record<string, number | null> | null;
  floor: number;
  wouldAnswer: boolean;
  operatorGrounded: boolean;
  corpusSize: number;
  topic?: string | null;
  gate?: Gate | null;
  excerpts: Excerpt[];
};

export type GapCluster = {
  representative: string;
  count: number;
  firstSeen: string | null;
  lastSeen: string | null;
  examples: string[];
  outcomes: Record<string, number>;
  topic: string | null;
  audiences: string[];
  answered?: number | null;
  nowAnswers?: boolean | null;
};

export type LiveRow = Record<string, unknown>;

export type LiveSource = {
  sourceId: string;
  name: string;
  visibility: string;
  status: string;
  requiredTables: string[];
  tables: { table: string; rows: LiveRow[] }[];
};

export type Agent = { id: string; status: "active" | "paused"; sourceIds: string[] };

export type TokenInfo = {
  id: string;
  bot: string;
  scopes: string[];
  createdAt: string | null;
  lastUsedAt: string | null;
  expiresAt: string | null;
};

export type Settings = {
  bot: string;
  products: string[];
  scopeToProducts: boolean;
  floor: number;
  topK: number;
  embedder: string | null;
  embedderOptions: { baseUrl?: string; model?: string; modelId?: string; dimensions?: number; apiKeySet: boolean };
  upstream: { url: string; bot: string; tokenSet: boolean } | null;
  rerank?: boolean;
  answer?: Record<string, unknown>;
  reindexNeeded?: boolean;
  [other: string]: unknown;
};

/** An answer other than 2xx, in the API's `{"error": {"code", "message", ...}}` shape. */
/** What a failed call says to the operator: the API's message and its stable code. */
export function errorText(e: unknown): string {
  return e instanceof ApiError ? `${e.message} (${e.code})` : String(e);
}

/** What every signed-in screen is given by the shell. */
export type ScreenProps = {
  creds: Credentials;
  canWrite: boolean | null;
  announce: (text: string) => void;
  onApiError: (e: ApiError) => boolean;
};

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function base(creds: Credentials): string {
  return `/api/bots/${encodeURIComponent(creds.bot)}/knowledge`;
}

async function toError(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  const err = (body as { error?: Record<string, unknown> } | null)?.error;
  if (err && typeof err.code === "string") {
    const { code, message, ...details } = err;
    return new ApiError(res.status, code, String(message ?? code), details);
  }
  return new ApiError(res.status, `http_${res.status}`, `the server answered ${res.status} ${res.statusText}`);
}

function botBase(creds: Credentials): string {
  return `/api/bots/${encodeURIComponent(creds.bot)}`;
}

function call<T>(creds: Credentials, method: string, path: string, body?: unknown): Promise<T> {
  return send<T>(creds, method, base(creds) + path, body);
}

async function send<T>(creds: Credentials, method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${creds.token}`, Accept: "application/json" };
  const init: RequestInit = { method, headers, credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch {
    throw new ApiError(0, "network", "the server could not be reached");
  }
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

export const api = {
  index: (c: Credentials) => call<IndexSummary>(c, "GET", "/index"),
  sources: (c: Credentials) => call<{ sources: Source[] }>(c, "GET", "/sources").then((r) => r.sources),
  create: (c: Credentials, body: Record<string, unknown>) => call<Source>(c, "POST", "/sources", body),
  action: (c: Credentials, id: string, verb: "refresh" | "cancel" | "disable" | "enable", force = false) =>
    call<Source>(c, "POST", `/sources/${encodeURIComponent(id)}/${verb}`, verb === "refresh" ? { force } : undefined),
  remove: (c: Credentials, id: string) => call<void>(c, "DELETE", `/sources/${encodeURIComponent(id)}`),
  test: (c: Credentials, q: string, audience: string, agentId: string | null) =>
    call<Retrieval>(c, "POST", "/retrieval-test", { q, audience, agentId }),
  reindex: (c: Credentials) => call<{ accepted: boolean }>(c, "POST", "/reindex", {}),
  gaps: (c: Credentials, audience: string | null) =>
    call<{ clusters: GapCluster[] }>(c, "GET", `/gaps${audience ? `?audience=${encodeURIComponent(audience)}` : ""}`).then(
      (r) => r.clusters,
    ),
  recheck: (c: Credentials, audience: string | null) =>
    call<{ clusters: GapCluster[] }>(c, "POST", "/gaps/recheck", audience ? { audience } : {}).then((r) => r.clusters),
  live: (c: Credentials) => call<{ sources: LiveSource[] }>(c, "GET", "/live").then((r) => r.sources),
  putLive: (c: Credentials, table: string, sourceId: string, rows: unknown) =>
    call<{ sourceId: string; table: string; rows: number; enabled: number }>(
      c,
      "PUT",
      `/live/${encodeURIComponent(table)}?sourceId=${encodeURIComponent(sourceId)}`,
      { rows },
    ),
  agents: (c: Credentials) => send<{ agents: Agent[] }>(c, "GET", `${botBase(c)}/agents`).then((r) => r.agents),
  putAgent: (c: Credentials, id: string, status: string, sourceIds: string[]) =>
    send<Agent>(c, "PUT", `${botBase(c)}/agents/${encodeURIComponent(id)}`, { status, sourceIds }),
  tokens: (c: Credentials) => send<{ tokens: TokenInfo[] }>(c, "GET", `${botBase(c)}/tokens`).then((r) => r.tokens),
  createToken: (c: Credentials, scopes: string[], expiresInSeconds: number | null) =>
    send<TokenInfo & { token: string }>(c, "POST", `${botBase(c)}/tokens`, { scopes, expiresInSeconds }),
  revokeToken: (c: Credentials, id: string) => send<void>(c, "DELETE", `${botBase(c)}/tokens/${encodeURIComponent(id)}`),
  settings: (c: Credentials) => send<Settings>(c, "GET", `${botBase(c)}/settings`),
  patchSettings: (c: Credentials, patch: Record<string, unknown>) =>
    send<Settings>(c, "PATCH", `${botBase(c)}/settings`, patch),
};

/** Whether the token holds `knowledge:admin` (tokens and settings): listing the tokens is
 * the cheapest admin-only read; 403 means no. */
export async function probeAdmin(c: Credentials): Promise<boolean | null> {
  try {
    await api.tokens(c);
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) return false;
    return null;
  }
}

/**
 * Whether the token may write. No route tells a token's scopes, so this asks for a refresh
 * of a source id that cannot exist: scopes are checked before the route runs, so a token
 * without `knowledge:write` gets 403 and one with it gets 404, and nothing changes either way.
 * Any other answer leaves the question open (null): write actions stay shown until a 403.
 */
export async function probeWrite(c: Credentials): Promise<boolean | null> {
  try {
    await call<unknown>(c, "POST", "/sources/console-scope-probe/refresh", {});
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) return false;
    if (e instanceof ApiError && e.status === 404) return true;
    return null;
  }
}

/** Upload a file source's bytes with progress (fetch cannot report upload progress). */
export function upload(
  c: Credentials,
  id: string,
  file: File,
  contentType: string,
  onProgress: (fraction: number) => void,
): Promise<Source> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${base(c)}/sources/${encodeURIComponent(id)}/upload`);
    xhr.setRequestHeader("Authorization", `Bearer ${c.token}`);
    xhr.setRequestHeader("Content-Type", contentType);
    xhr.responseType = "text";
    xhr.upload.onprogress = (ev) => {
      if (ev.lengthComputable && ev.total > 0) onProgress(ev.loaded / ev.total);
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "the upload could not reach the server"));
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as Source);
        return;
      }
      const err = (body as { error?: Record<string, unknown> } | null)?.error;
      if (err && typeof err.code === "string") {
        const { code, message, ...details } = err;
        reject(new ApiError(xhr.status, code, String(message ?? code), details));
      } else {
        reject(new ApiError(xhr.status, `http_${xhr.status}`, `the server answered ${xhr.status}`));
      }
    };
    xhr.send(file);
  });
}
