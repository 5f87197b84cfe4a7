import "./style.css";

import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";

import { ApiError, type Credentials, probeWrite } from "./api";
import { clearCredentials, loadCredentials, saveCredentials } from "./session";
import { SignIn } from "./SignIn";
import { Sources } from "./Sources";
import { TestRetrieval } from "./TestRetrieval";

type Route = "sources" | "test";

const SCREENS: { route: Route; label: string }[] = [
  { route: "sources", label: "Sources" },
  { route: "test", label: "Test retrieval" },
];

function currentRoute(): Route {
  return window.location.hash === "#/test" ? "test" : "sources";
}

function App() {
  const [creds, setCreds] = useState<Credentials | null>(loadCredentials);
  const [canWrite, setCanWrite] = useState<boolean | null>(null);
  const [route, setRoute] = useState<Route>(currentRoute);
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
              {SCREENS.map((s) => (
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
      ) : (
        <Sources key={`sources-${creds.bot}`} creds={creds} canWrite={canWrite} announce={announce} onApiError={onApiError} />
      )}
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
