import { useEffect, useRef, useState } from "preact/hooks";

import { ApiError, type Credentials, api } from "./api";

type Props = { onSignedIn: (c: Credentials) => void; notice: string | null };

export function SignIn({ onSignedIn, notice }: Props) {
  const [bot, setBot] = useState("default");
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const errorBox = useRef<HTMLDivElement>(null);

  useEffect(() => heading.current?.focus(), []);
  useEffect(() => {
    if (error) errorBox.current?.focus();
  }, [error]);

  async function submit(ev: Event) {
    ev.preventDefault();
    const creds = { bot: bot.trim(), token: token.trim() };
    if (!creds.token) {
      setError("Paste a bot token first: `kb token create` prints one on its last line.");
      return;
    }
    if (!creds.bot) {
      setError("Enter the bot this token belongs to.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.index(creds);
      onSignedIn(creds);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setError(`This token was refused: ${e.message}.`);
      else if (e instanceof ApiError && e.status === 403) setError(`This token does not open bot “${creds.bot}”: ${e.message}.`);
      else if (e instanceof ApiError) setError(`Sign-in failed: ${e.message}.`);
      else setError("Sign-in failed.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="signin">
      <h1 tabIndex={-1} ref={heading}>
        Sign in to the kb console
      </h1>
      {notice && <p class="notice">{notice}</p>}
      <p>
        Paste a bot token. It stays in this browser tab only and is sent to this server as a bearer header;
        closing the tab forgets it.
      </p>
      <form onSubmit={submit} noValidate aria-describedby={error ? "signin-error" : undefined}>
        {error && (
          <div id="signin-error" class="error" role="alert" tabIndex={-1} ref={errorBox}>
            {error}
          </div>
        )}
        <div class="field">
          <label for="signin-bot">Bot</label>
          <input
            id="signin-bot"
            name="bot"
            value={bot}
            onInput={(e) => setBot(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
            aria-describedby="signin-bot-hint"
          />
          <p id="signin-bot-hint" class="hint">
            The bot id the token was created for (<code>kb token create --bot …</code>).
          </p>
        </div>
        <div class="field">
          <label for="signin-token">Token</label>
          <input
            id="signin-token"
            name="token"
            type="password"
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            autocomplete="off"
            spellcheck={false}
            aria-required="true"
            aria-invalid={error ? "true" : undefined}
          />
        </div>
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
