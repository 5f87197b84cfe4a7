import "./style.css";

import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import { Agents } from "./Agents";
import { ApiError, type Credentials, probeAdmin, probeWrite } from "./api";
import { Gaps } from "./Gaps";
import { Live } from "./Live";
import { clearCredentials, loadCredentials, saveCredentials } from "./session";
import { SignIn } from "./SignIn";
import { Sources } from "./Sources";
import { Settings } from "./Settings";
import { TestRetrieval } from "./TestRetrieval";
import { Tokens } from "./Tokens";

type Route = "sources" | "test" | "gaps" | "live" | "agents" | "tokens" | "settings";

/** Screens; `admin` ones are shown only to a token with knowledge:admin. */
const SCREENS: { route: Route; label: string; admin?: boolean }[] = [
  { route: "sources", label: "Sources" },
  { route: "test", label: "Test retrieval" },
  { route: "gaps", label: "Gaps" },
  { route: "live", label: "Live data" },
  { route: "agents", label: "Agents" },
  { route: "tokens", label: "Tokens", admin: true },
  { route: "settings", label: "Settings", admin: true },
];

/** `#/gaps`, or `#/sources?draft=question` (the article form prefilled). */
function currentRoute(): { route: Route; draft: string | null } {
  const [path, query] = window.location.hash.replace(/^#\/?/, "").split("?", 2);
  const found = SCREENS.find((s) => s.route === path);
  const draft = new URLSearchParams(query ?? "").get("draft");
  return { route: found ? found.route : "sources", draft: found?.route === "sources" ? draft : null };
}

function App() {
  const [creds, setCreds] = useState<Credentials | null>(loadCredentials);
  const [canWrite, setCanWrite] = useState<boolean | null>(null);
  const [canAdmin, setCanAdmin] = useState<boolean | null>(null);
  const [{ route, draft }, setRoute] = useState(currentRoute);
  const [status, setStatus] = useState("");
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    document.title = creds ? `${SCREENS.find((s) => s.route === route)?.label} · kb console` : "Sign in · kb console";
  }, [creds, route]);

  useEffect(() => {
    if (!creds) return;
    let live = true;
    void probeWrite(creds).then((w) => {
      if (live) setCanWrite(w);
    });
    void probeAdmin(creds).then((a) => {
      if (live) setCanAdmin(a);
    });
    return () => {
      live = false;
    };
  }, [creds]);

  // the polite live region re-reads a message only when its text changes
  const announce = useCallback((text: string) => {
    setStatus((prev) => (prev === text ? `${text}\u00a0` : text));
  }, []);

  const signOut = useCallback((message: string | null) => {
    clearCredentials();
    setCreds(null);
    setCanWrite(null);
    setCanAdmin(null);
    setNotice(message);
  }, []);

  /** Errors every screen handles alike; true when handled. */
  const onApiError = useCallback(
    (e: ApiError): boolean => {
      if (e.status === 401) {
        signOut(`The server no longer accepts this token (${e.message}); sign in again.`);
        return true;
      }
      if (e.status === 403 && e.message.includes("knowledge:write")) {
        setCanWrite(false);
        announce("This token can only read: write actions are now hidden.");
        return true;
      }
      if (e.status === 403 && e.message.includes("knowledge:admin")) {
        setCanAdmin(false);
        announce("This token has no knowledge:admin scope: tokens and settings are hidden.");
        return true;
      }
      return false;
    },
    [signOut, announce],
  );

  const signedIn = useCallback((c: Credentials) => {
    saveCredentials(c);
    setNotice(null);
    setCreds(c);
  }, []);

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">kb console</span>
        {creds && (
          <nav aria-label="Screens">
            <ul>
              {SCREENS.filter((s) => !s.admin || canAdmin === true).map((s) => (
                <li>
                  <a href={`#/${s.route}`} aria-current={route === s.route ? "page" : undefined}>
                    {s.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {creds && (
          <div class="who">
            <span>
              Bot <strong>{creds.bot}</strong>
              {canWrite === false ? " · read only" : ""}
            </span>
            <button type="button" class="secondary" onClick={() => signOut("Signed out.")}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <div class="live-status" role="status" aria-live="polite">
        {status}
      </div>
      {!creds ? (
        <SignIn onSignedIn={signedIn} notice={notice} />
      ) : route === "test" ? (
        <TestRetrieval key={`test-${creds.bot}`} creds={creds} announce={announce} onApiError={onApiError} />
      ) : route === "gaps" ? (
        <Gaps key={`gaps-${creds.bot}`} creds={creds} canWrite={canWrite} announce={announce} onApiError={onApiError} />
      ) : route === "live" ? (
        <Live key={`live-${creds.bot}`} creds={creds} canWrite={canWrite} announce={announce} onApiError={onApiError} />
      ) : route === "agents" ? (
        <Agents key={`agents-${creds.bot}`} creds={creds} canWrite={canWrite} announce={announce} onApiError={onApiError} />
      ) : route === "tokens" && canAdmin !== false ? (
        <Tokens key={`tokens-${creds.bot}`} creds={creds} announce={announce} onApiError={onApiError} />
      ) : route === "settings" && canAdmin !== false ? (
        <Settings key={`settings-${creds.bot}`} creds={creds} canWrite={canWrite} announce={announce} onApiError={onApiError} />
      ) : (
        <Sources
          key={`sources-${creds.bot}-${draft ?? ""}`}
          creds={creds}
          canWrite={canWrite}
          draft={draft}
          announce={announce}
          onApiError={onApiError}
        />
      )}
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
