import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { type Agent, api, ApiError, type Credentials, type ScreenProps, type Source } from "./api";
import { useRead, useSubmit } from "./calls";
import { usePolling } from "./polling";

type Props = ScreenProps;

type FormProps = {
  creds: Credentials;
  agent: Agent | null;
  sources: Source[];
  onSaved: (a: Agent) => void;
  onCancel: () => void;
  onApiError: (e: ApiError) => boolean;
};

function AgentForm({ creds, agent, sources, onSaved, onCancel, onApiError }: FormProps) {
  const [id, setId] = useState(agent?.id ?? "");
  const [status, setStatus] = useState<string>(agent?.status ?? "active");
  const [selected, setSelected] = useState<Set<string>>(new Set(agent?.sourceIds ?? []));
  const { busy, error, errorBox, run } = useSubmit(onApiError);
  const first = useRef<HTMLInputElement & HTMLSelectElement>(null);
  const fid = `agent-${agent?.id ?? "new"}`;

  useEffect(() => first.current?.focus(), []);

  function toggle(sid: string, on: boolean) {
    setSelected((prev) => {
      const next = new Set(prev);
      if (on) next.add(sid);
      else next.delete(sid);
      return next;
    });
  }

  async function save(ev: Event) {
    ev.preventDefault();
    await run(async () => {
      // the sources' own order (heaviest first), not the order they were ticked
      const ids = sources.filter((s) => selected.has(s.id)).map((s) => s.id);
      onSaved(await api.putAgent(creds, id.trim(), status, ids));
    });
  }

  return (
    <form class="card" onSubmit={save} noValidate aria-labelledby={`${fid}-title`}>
      <h2 id={`${fid}-title`}>{agent ? `Edit agent ${agent.id}` : "Add an agent"}</h2>
      {error && (
        <p id={`${fid}-error`} class="error" role="alert" tabIndex={-1} ref={errorBox}>
          {error}
        </p>
      )}
      <div class="row">
        {!agent && (
          <div class="field">
            <label for={`${fid}-id`}>Agent id</label>
            <input
              id={`${fid}-id`}
              ref={first}
              value={id}
              onInput={(e) => setId(e.currentTarget.value)}
              autocomplete="off"
              aria-describedby={`${fid}-id-hint`}
            />
            <p id={`${fid}-id-hint`} class="hint">
              1-64 letters, digits, ., _ or -: the agentId your assistant sends.
            </p>
          </div>
        )}
        <div class="field">
          <label for={`${fid}-status`}>Status</label>
          <select
            id={`${fid}-status`}
            ref={agent ? first : undefined}
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value)}
          >
            <option value="active">active</option>
            <option value="paused">paused (its questions are refused)</option>
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Sources it searches</legend>
        <p class="hint">None ticked: every source of the bot. At most 100.</p>
        <ul class="checks">
          {sources.map((s) => (
            <li>
              <input
                type="checkbox"
                id={`${fid}-src-${s.id}`}
                checked={selected.has(s.id)}
                onChange={(e) => toggle(s.id, e.currentTarget.checked)}
              />
              <label for={`${fid}-src-${s.id}`}>
                {s.name} <span class="sub">{s.type} · {s.visibility}</span>
              </label>
            </li>
          ))}
        </ul>
      </fieldset>
      <div class="buttons">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : agent ? "Save agent" : "Add agent"}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Agents({ creds, canWrite, announce, onApiError }: Props) {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [sources, setSources] = useState<Source[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => heading.current?.focus(), []);

  const read = useCallback(async () => {
    const [a, s] = await Promise.all([api.agents(creds), api.sources(creds)]);
    setAgents(a);
    setSources(s);
  }, [creds]);
  const load = useRead(read, setError, onApiError);
  const poke = usePolling(load, editing ? 3_600_000 : 15000);

  const names = new Map(sources.map((s) => [s.id, s.name]));
  const write = canWrite !== false;

  function saved(a: Agent) {
    setEditing(null);
    announce(`Agent ${a.id} saved: ${a.status}, ${a.sourceIds.length ? `${a.sourceIds.length} source${a.sourceIds.length === 1 ? "" : "s"}` : "every source"}.`);
    poke();
    heading.current?.focus();
  }

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Agents
      </h1>
      <p>An agent searches only the sources it selects (all of them when it selects none). A paused agent is refused.</p>
      {error && (
        <p class="error" role="alert">
          The agents could not be loaded: {error}
        </p>
      )}
      {!agents && !error && <p aria-busy="true">Loading agents…</p>}
      {agents && agents.length === 0 && <p class="notice">No agent yet: every question searches every source.</p>}
      {agents && agents.length > 0 && (
        <div class="table-wrap">
          <table class="data agents">
            <caption>Agents of bot {creds.bot}</caption>
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Status</th>
                <th scope="col">Sources</th>
                {write && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr data-agent={a.id}>
                  <th scope="row" class="name">
                    {a.id}
                  </th>
                  <td>
                    <span class={`status status-${a.status === "active" ? "ready" : "disabled"}`}>{a.status}</span>
                  </td>
                  <td>
                    {a.sourceIds.length === 0
                      ? "every source"
                      : a.sourceIds.map((id) => names.get(id) ?? `${id} (deleted)`).join(", ")}
                  </td>
                  {write && (
                    <td class="row-actions">
                      <button type="button" class="secondary" onClick={() => setEditing(a.id)}>
                        Edit<span class="sr-only"> agent {a.id}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {write && editing !== null && (
        <AgentForm
          key={editing}
          creds={creds}
          agent={agents?.find((a) => a.id === editing) ?? null}
          sources={sources}
          onSaved={saved}
          onCancel={() => setEditing(null)}
          onApiError={onApiError}
        />
      )}
      {write && editing === null && agents && (
        <button type="button" onClick={() => setEditing("")}>
          Add an agent
        </button>
      )}
    </main>
  );
}
