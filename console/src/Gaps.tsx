import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { api, ApiError, errorText, type GapCluster, type ScreenProps } from "./api";
import { DateTime } from "./DateTime";
import { AUDIENCES } from "./explain";
import { useRead } from "./calls";
import { usePolling } from "./polling";

type Props = ScreenProps;

/** Why a question went unanswered, in words (the API's outcome codes). */
export const OUTCOMES: Record<string, string> = {
  nothing_found: "nothing found",
  below_floor: "found, but below the floor",
  gated: "gated (no operator-written excerpt settles the topic)",
};

function outcomes(c: GapCluster): string {
  return Object.entries(c.outcomes)
    .map(([k, n]) => `${OUTCOMES[k] ?? k}: ${n}`)
    .join(" · ");
}

/** The key of a cluster across a reload and a recheck (its representative question). */
const keyOf = (c: GapCluster) => `${c.representative}\u0000${c.audiences.join(",")}`;

export function Gaps({ creds, canWrite, announce, onApiError }: Props) {
  const [audience, setAudience] = useState("");
  const [clusters, setClusters] = useState<GapCluster[] | null>(null);
  const [rechecked, setRechecked] = useState<Map<string, GapCluster> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => heading.current?.focus(), []);

  const read = useCallback(async () => setClusters(await api.gaps(creds, audience || null)), [creds, audience]);
  const load = useRead(read, setError, onApiError);

  const poke = usePolling(load, 15000);

  async function recheck() {
    setBusy(true);
    setError(null);
    try {
      const out = await api.recheck(creds, audience || null);
      setRechecked(new Map(out.map((c) => [keyOf(c), c])));
      const now = out.filter((c) => c.nowAnswers).length;
      announce(
        `Rechecked ${out.length} gap${out.length === 1 ? "" : "s"}: ${now} now answer${now === 1 ? "s" : ""}, ${
          out.length - now
        } still unanswered.`,
      );
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      setError(errorText(e));
    } finally {
      setBusy(false);
      poke();
    }
  }

  const write = canWrite !== false;

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Gaps
      </h1>
      <p>
        Questions nothing answered, grouped by meaning, most frequent first. Recheck asks each group's examples
        again against today's index without recording anything.
      </p>
      <div class="actions-bar">
        <label for="gaps-audience">Audience</label>
        <select id="gaps-audience" value={audience} onChange={(e) => setAudience(e.currentTarget.value)}>
          <option value="">all audiences</option>
          {AUDIENCES.map((a) => (
            <option value={a.value}>{a.label.toLowerCase()}</option>
          ))}
        </select>
        <button type="button" class="secondary" onClick={() => poke()}>
          Reload list
        </button>
        {write && clusters && clusters.length > 0 && (
          <button type="button" onClick={() => void recheck()} disabled={busy}>
            {busy ? "Rechecking…" : "Recheck all"}
          </button>
        )}
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!clusters && !error && <p aria-busy="true">Loading gaps…</p>}
      {clusters && clusters.length === 0 && (
        <p class="notice">No unanswered questions{audience ? ` from the ${audience} audience` : ""}. Gaps are recorded when a question finds nothing, stays below the floor, or is gated.</p>
      )}
      {clusters && clusters.length > 0 && (
        <div class="table-wrap">
          <table class="data gaps">
            <caption>Unanswered questions of bot {creds.bot}</caption>
            <thead>
              <tr>
                <th scope="col">Question</th>
                <th scope="col">Asked</th>
                <th scope="col">Last asked</th>
                <th scope="col">Why unanswered</th>
                <th scope="col">Topic</th>
                <th scope="col">Recheck</th>
                {write && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {clusters.map((c) => {
                const r = rechecked?.get(keyOf(c));
                return (
                  <tr key={keyOf(c)}>
                    <th scope="row" class="name">
                      {c.representative}
                      <span class="sub">{c.audiences.join(", ")}</span>
                      {c.examples.length > 1 && (
                        <details>
                          <summary>{c.examples.length} phrasings</summary>
                          <ul class="examples">
                            {c.examples.map((ex) => (
                              <li>{ex}</li>
                            ))}
                          </ul>
                        </details>
                      )}
                    </th>
                    <td class="num">{c.count}×</td>
                    <td class="when">
                      {c.lastSeen ? <DateTime iso={c.lastSeen} /> : "—"}
                      {c.firstSeen && c.firstSeen !== c.lastSeen && (
                        <span class="sub">
                          first <DateTime iso={c.firstSeen} />
                        </span>
                      )}
                    </td>
                    <td>{outcomes(c)}</td>
                    <td>{c.topic ? c.topic.replace(/_/g, " ") : "—"}</td>
                    <td class="recheck">
                      {r ? (
                        r.nowAnswers ? (
                          <span class="status status-ready">now answers</span>
                        ) : (
                          <span class="status status-failed">
                            still unanswered ({r.answered ?? 0} of {r.examples.length} answer now)
                          </span>
                        )
                      ) : (
                        "—"
                      )}
                    </td>
                    {write && (
                      <td class="row-actions">
                        <a class="button-link" href={`#/sources?draft=${encodeURIComponent(c.representative)}`}>
                          Draft an article<span class="sr-only"> answering “{c.representative}”</span>
                        </a>
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </main>
  );
}
