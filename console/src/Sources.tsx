import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { ApiError, type Credentials, type IndexSummary, type Source, api } from "./api";
import { usePolling } from "./polling";
import { CreateSource } from "./CreateSource";
import { explainSourceError } from "./explain";
import { DateTime } from "./DateTime";

/** Statuses that change by themselves: the list is polled quickly while any source has one. */
const MOVING = new Set(["waiting", "indexing", "needs_refresh"]);
const FAST_POLL_MS = 1500;
const SLOW_POLL_MS = 10000;

type Props = {
  creds: Credentials;
  canWrite: boolean | null;
  /** a question from the Gaps screen: the article form opens prefilled with it */
  draft?: string | null;
  announce: (text: string) => void;
  onApiError: (e: ApiError) => boolean;
};

type RowNote = { kind: "error" | "info"; text: string };

function progress(s: Source): string {
  const parts = [
    `${s.documentsProcessed} document${s.documentsProcessed === 1 ? "" : "s"}`,
    `${s.fragmentsProcessed} fragment${s.fragmentsProcessed === 1 ? "" : "s"} processed`,
  ];
  if (s.documentsFailed) parts.push(`${s.documentsFailed} failed`);
  if (s.documentsUnchanged) parts.push(`${s.documentsUnchanged} unchanged`);
  if (s.attempts) parts.push(`attempt${s.attempts === 1 ? "" : "s"}: ${s.attempts}`);
  return parts.join(" · ");
}

function label(type: string): string {
  return type === "faq" ? "FAQ" : type.charAt(0).toUpperCase() + type.slice(1);
}

export function Sources({ creds, canWrite, draft, announce, onApiError }: Props) {
  const [sources, setSources] = useState<Source[] | null>(null);
  const [index, setIndex] = useState<IndexSummary | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [notes, setNotes] = useState<Record<string, RowNote>>({});
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busyRow, setBusyRow] = useState<string | null>(null);
  const [force, setForce] = useState(false);
  const statuses = useRef<Map<string, string> | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!draft) heading.current?.focus();
  }, [draft]);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
  }, [confirming]);

  const load = useCallback(async (): Promise<boolean> => {
    try {
      const [list, summary] = await Promise.all([api.sources(creds), api.index(creds)]);
      const before = statuses.current;
      if (before) {
        // a source created since the last poll is announced once it has failed (it may fail
        // before any poll saw it waiting)
        const changed = list.filter((s) =>
          before.has(s.id) ? before.get(s.id) !== s.status : s.status === "failed",
        );
        if (changed.length) announce(changed.map((s) => `“${s.name}” is now ${s.status.replace("_", " ")}.`).join(" "));
      }
      statuses.current = new Map(list.map((s) => [s.id, s.status]));
      setSources(list);
      setIndex(summary);
      setLoadError(null);
      return list.some((s) => MOVING.has(s.status));
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return false;
      setLoadError(e instanceof Error ? e.message : String(e));
      return false;
    }
  }, [creds, announce, onApiError]);

  // a hidden tab asks nothing; it catches up as soon as it is shown again
  const reload = usePolling(load, SLOW_POLL_MS, FAST_POLL_MS);

  function note(id: string, n: RowNote | null) {
    setNotes((prev) => {
      const next = { ...prev };
      if (n) next[id] = n;
      else delete next[id];
      return next;
    });
  }

  async function act(s: Source, verb: "refresh" | "cancel" | "disable" | "enable" | "delete") {
    setBusyRow(s.id);
    note(s.id, null);
    try {
      if (verb === "delete") {
        await api.remove(creds, s.id);
        setConfirming(null);
        announce(`Deleted “${s.name}”.`);
        heading.current?.focus();
      } else {
        const after = await api.action(creds, s.id, verb, verb === "refresh" && force);
        // announced here; the next poll must not announce the same change again
        statuses.current?.set(s.id, after.status);
        const done = { refresh: force ? "queued for a forced refresh" : "queued for a refresh", cancel: "cancelled", disable: "disabled", enable: "enabled and queued" };
        announce(`“${s.name}” ${done[verb]}.`);
      }
    } catch (e) {
      setConfirming(null);
      if (e instanceof ApiError && onApiError(e)) return;
      if (e instanceof ApiError && e.code === "source_in_use") {
        const agents = Array.isArray(e.details.agents) ? (e.details.agents as string[]) : [];
        note(s.id, {
          kind: "error",
          text: `Not deleted: ${agents.length ? `active agent${agents.length === 1 ? "" : "s"} ${agents.join(", ")}` : "an active agent"} ${
            agents.length === 1 ? "selects" : "select"
          } this source. Deselect it or pause the agent first.`,
        });
      } else {
        note(s.id, { kind: "error", text: e instanceof Error ? e.message : String(e) });
      }
    } finally {
      setBusyRow(null);
      reload();
    }
  }

  const created = useCallback(
    (_source: Source, text: string) => {
      announce(text);
      reload();
    },
    [announce],
  );

  const write = canWrite !== false;

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Sources
      </h1>
      {index && (
        <dl class="summary" aria-label="Index summary">
          <div>
            <dt>Index built</dt>
            <dd>{index.builtAt ? <DateTime iso={index.builtAt} /> : "never"}</dd>
          </div>
          <div>
            <dt>Passages in search</dt>
            <dd>{index.totalPassages.toLocaleString()}</dd>
          </div>
          <div>
            <dt>Sources</dt>
            <dd>{index.sources.length}</dd>
          </div>
          <div>
            <dt>Embedder</dt>
            <dd>{index.embedder === "none" ? "none (keyword search only)" : index.embedder}</dd>
          </div>
        </dl>
      )}
      {loadError && (
        <p class="error" role="alert">
          The sources could not be loaded: {loadError}
        </p>
      )}
      <div class="actions-bar">
        <button type="button" class="secondary" onClick={() => reload()}>
          Reload list
        </button>
        <span class="hint">The list updates by itself while sources are indexing.</span>
        {write && (
          <span class="force">
            <input id="force-refresh" type="checkbox" checked={force} onChange={(e) => setForce(e.currentTarget.checked)} />
            <label for="force-refresh">Force: Refresh indexes again even when nothing changed</label>
          </span>
        )}
      </div>
      {sources && sources.length === 0 && <p>No sources yet. Add one below, or ingest a pack with kb ingest.</p>}
      {sources && sources.length > 0 && (
        <div class="table-wrap">
          <table class="sources">
            <caption>Sources of bot {creds.bot}, heaviest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Passages</th>
                <th scope="col">Weight</th>
                <th scope="col">Priority</th>
                <th scope="col">Last indexed</th>
                <th scope="col">Problem</th>
                {write && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {sources.map((s) => {
                const err = s.errorCode ? explainSourceError(s.errorCode, s.errorMessage) : null;
                const n = notes[s.id];
                return (
                  <tr key={s.id} data-source-id={s.id} data-status={s.status}>
                    <th scope="row" class="name">
                      {s.name}
                      <span class="sub">{s.visibility}</span>
                    </th>
                    <td>{label(s.type)}</td>
                    <td class="state">
                      <span class={`status status-${s.status}`}>{s.status.replace("_", " ")}</span>
                      <span class="sub">
                        {s.type === "live" ? (
                          <>
                            read when asked, never indexed: <a href="#/live">see its tables</a>
                          </>
                        ) : (
                          progress(s)
                        )}
                      </span>
                    </td>
                    <td class="num">{s.passages.toLocaleString()}</td>
                    <td class="num">{s.weight !== 1 ? `×${s.weight}` : ""}</td>
                    <td class="num">{s.priority}</td>
                    <td class="when">
                      {s.lastIndexedAt ? <DateTime iso={s.lastIndexedAt} /> : s.type === "live" ? "not indexed" : "never"}
                    </td>
                    <td class="problem">
                      {err && (
                        <>
                          <span class="code">{s.errorCode}</span>
                          <span class="sub">{err.what}</span>
                          <span class="sub todo">What to do: {err.todo}</span>
                        </>
                      )}
                      {n && (
                        <span class={n.kind === "error" ? "row-error" : "sub"} role={n.kind === "error" ? "alert" : undefined}>
                          {n.text}
                        </span>
                      )}
                    </td>
                    {write && (
                      <td class="row-actions">
                        {confirming === s.id ? (
                          <span class="confirm">
                            <span>Delete “{s.name}” and its passages?</span>
                            <button
                              type="button"
                              class="danger"
                              ref={confirmButton}
                              disabled={busyRow === s.id}
                              onClick={() => act(s, "delete")}
                            >
                              Delete for good
                            </button>
                            <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                              Keep
                            </button>
                          </span>
                        ) : (
                          <>
                            {s.status !== "disabled" && (
                              <button type="button" disabled={busyRow === s.id} onClick={() => act(s, "refresh")}>
                                Refresh<span class="sr-only"> {s.name}</span>
                              </button>
                            )}
                            {MOVING.has(s.status) && (
                              <button type="button" disabled={busyRow === s.id} onClick={() => act(s, "cancel")}>
                                Cancel<span class="sr-only"> indexing of {s.name}</span>
                              </button>
                            )}
                            {s.status === "disabled" ? (
                              <button type="button" disabled={busyRow === s.id} onClick={() => act(s, "enable")}>
                                Enable<span class="sr-only"> {s.name}</span>
                              </button>
                            ) : (
                              <button type="button" disabled={busyRow === s.id} onClick={() => act(s, "disable")}>
                                Disable<span class="sr-only"> {s.name}</span>
                              </button>
                            )}
                            <button
                              type="button"
                              class="danger"
                              disabled={busyRow === s.id}
                              onClick={() => setConfirming(s.id)}
                            >
                              Delete<span class="sr-only"> {s.name}</span>
                            </button>
                          </>
                        )}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {!sources && !loadError && <p aria-busy="true">Loading sources…</p>}
      {write ? (
        <CreateSource creds={creds} draft={draft ?? null} onCreated={created} onApiError={onApiError} />
      ) : (
        <p class="notice">This token can only read: creating, refreshing, disabling and deleting are hidden.</p>
      )}
    </main>
  );
}
