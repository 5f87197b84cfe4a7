import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { api, ApiError, type Credentials, errorText, type TokenInfo } from "./api";
import { DateTime } from "./DateTime";
import { useRead } from "./calls";
import { usePolling } from "./polling";

type Props = {
  creds: Credentials;
  announce: (text: string) => void;
  onApiError: (e: ApiError) => boolean;
};

const SCOPES: { value: string; hint: string }[] = [
  { value: "knowledge:read", hint: "list sources, test and run retrieval, read gaps" },
  { value: "knowledge:write", hint: "create, refresh, disable and delete sources; live data; agents" },
  { value: "knowledge:admin", hint: "tokens and bot settings" },
];

const EXPIRIES: { label: string; seconds: number | null }[] = [
  { label: "never", seconds: null },
  { label: "in 1 day", seconds: 86400 },
  { label: "in 30 days", seconds: 30 * 86400 },
  { label: "in 90 days", seconds: 90 * 86400 },
  { label: "in 1 year", seconds: 365 * 86400 },
];

/** A token's public id: the first 16 hex digits of its SHA-256 (kb's Token.id). */
async function idOf(secret: string): Promise<string | null> {
  try {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret));
    return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("").slice(0, 16);
  } catch {
    return null; // no WebCrypto (a page not served over HTTPS or loopback): the mark is left out
  }
}

function When({ iso, none }: { iso: string | null; none: string }) {
  return iso ? <DateTime iso={iso} /> : <>{none}</>;
}

export function Tokens({ creds, announce, onApiError }: Props) {
  const [tokens, setTokens] = useState<TokenInfo[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [scopes, setScopes] = useState<Set<string>>(new Set(["knowledge:read"]));
  const [expiry, setExpiry] = useState("0");
  const [created, setCreated] = useState<(TokenInfo & { token: string }) | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const secretBox = useRef<HTMLDivElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);

  const [ownId, setOwnId] = useState<string | null>(null);

  useEffect(() => heading.current?.focus(), []);
  useEffect(() => {
    void idOf(creds.token).then(setOwnId);
  }, [creds.token]);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
  }, [confirming]);

  const read = useCallback(async () => setTokens(await api.tokens(creds)), [creds]);
  const load = useRead(read, setError, onApiError);
  const poke = usePolling(load, 30000);

  async function create(ev: Event) {
    ev.preventDefault();
    setBusy(true);
    setFormError(null);
    try {
      const out = await api.createToken(creds, SCOPES.map((s) => s.value).filter((s) => scopes.has(s)), EXPIRIES[Number(expiry)].seconds);
      setCreated(out);
      announce(`Token ${out.id} created. Copy it now: it is not shown again.`);
      queueMicrotask(() => secretBox.current?.focus());
      poke();
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      setFormError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(t: TokenInfo) {
    setBusy(true);
    try {
      await api.revokeToken(creds, t.id);
      setConfirming(null);
      if (created?.id === t.id) setCreated(null);
      announce(`Token ${t.id} revoked: the next request with it is refused.`);
      heading.current?.focus();
    } catch (e) {
      setConfirming(null);
      if (e instanceof ApiError && onApiError(e)) return;
      setError(errorText(e));
    } finally {
      setBusy(false);
      poke();
    }
  }

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Tokens
      </h1>
      <p>Tokens of bot {creds.bot}. A token's secret is shown once, when it is created; kb keeps only its hash.</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!tokens && !error && <p aria-busy="true">Loading tokens…</p>}
      {tokens && (
        <div class="table-wrap">
          <table class="data tokens">
            <caption>{tokens.length} token{tokens.length === 1 ? "" : "s"}</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr data-token={t.id}>
                  <th scope="row" class="name">
                    <code>{t.id}</code>
                    {t.id === ownId && <span class="sub">signed in here</span>}
                  </th>
                  <td>{t.scopes.join(", ")}</td>
                  <td class="when">
                    <When iso={t.createdAt} none="—" />
                  </td>
                  <td class="when">
                    <When iso={t.lastUsedAt} none="never" />
                  </td>
                  <td class="when">
                    <When iso={t.expiresAt} none="never" />
                  </td>
                  <td class="row-actions">
                    {confirming === t.id ? (
                      <span class="confirm">
                        <span>
                          Revoke {t.id}? Whatever uses it stops working at once
                          {t.id === ownId ? ", and this console signs out" : ""}.
                        </span>
                        <button type="button" class="danger" ref={confirmButton} disabled={busy} onClick={() => void revoke(t)}>
                          Revoke for good
                        </button>
                        <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                          Keep
                        </button>
                      </span>
                    ) : (
                      <button type="button" class="danger" onClick={() => setConfirming(t.id)}>
                        Revoke<span class="sr-only"> token {t.id}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {created && (
        <div class="secret card" tabIndex={-1} ref={secretBox} aria-labelledby="secret-title">
          <h2 id="secret-title">New token {created.id}</h2>
          <p>Copy it now: it is not shown again. Scopes: {created.scopes.join(", ")}.</p>
          <p>
            <label for="secret-value">Secret</label>
            <input id="secret-value" class="secret-value" readOnly value={created.token} onFocus={(e) => e.currentTarget.select()} />
          </p>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form class="card" onSubmit={create} noValidate aria-labelledby="token-new">
        <h2 id="token-new">Create a token</h2>
        {formError && (
          <p class="error" role="alert">
            {formError}
          </p>
        )}
        <fieldset>
          <legend>Scopes</legend>
          <ul class="checks">
            {SCOPES.map((s) => (
              <li>
                <input
                  type="checkbox"
                  id={`scope-${s.value}`}
                  checked={scopes.has(s.value)}
                  aria-describedby={`scope-${s.value}-hint`}
                  onChange={(e) => {
                    const on = e.currentTarget.checked;
                    setScopes((prev) => {
                      const next = new Set(prev);
                      if (on) next.add(s.value);
                      else next.delete(s.value);
                      return next;
                    });
                  }}
                />
                <label for={`scope-${s.value}`}>{s.value}</label>{" "}
                <span id={`scope-${s.value}-hint`} class="hint">
                  {s.hint}
                </span>
              </li>
            ))}
          </ul>
        </fieldset>
        <div class="field">
          <label for="token-expiry">Expires</label>
          <select id="token-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
            {EXPIRIES.map((x, i) => (
              <option value={String(i)}>{x.label}</option>
            ))}
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Create token
        </button>
      </form>
    </main>
  );
}
