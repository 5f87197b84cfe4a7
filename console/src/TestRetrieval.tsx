import { useEffect, useRef, useState } from "preact/hooks";

import { ApiError, type Credentials, type Excerpt, type Retrieval, api } from "./api";
import { AUDIENCES, REASONS, verdict } from "./explain";

type Props = {
  creds: Credentials;
  announce: (text: string) => void;
  onApiError: (e: ApiError) => boolean;
};

const SIGNAL_LABELS: Record<string, string> = {
  lexicalRank: "Keyword rank",
  semanticRank: "Meaning rank",
  rrf: "Rank fusion (RRF)",
  blendScore: "Fused score (blend)",
  titleMatch: "Words in the title",
  nearMatch: "Words together",
  weight: "Weight",
  rescueSimilarity: "Rescue similarity",
  rerank: "Rerank score",
  rerankRank: "Rerank rank",
  lexicalScore: "Keyword score (BM25)",
  semanticScore: "Meaning similarity",
  upstreamRank: "Upstream rank",
  liveRank: "Live row rank",
};

/** The parts of the confidence (retrieve/confidence.py), in words. */
const COMPONENTS: Record<string, { label: string; hint: string }> = {
  coverage: { label: "Coverage", hint: "share of the question's words the top excerpt holds close together" },
  strength: { label: "Strength", hint: "best keyword score as a share of the most the question could score" },
  focus: { label: "Focus", hint: "how far the best match stands above the fifth-best page" },
  unseen: { label: "Unseen words", hint: "weight of question words no passage holds (counts against)" },
  agreement: { label: "Agreement", hint: "share of the top five keyword passages the meaning search also ranks top five" },
  similarity: { label: "Similarity", hint: "meaning similarity (cosine) of the question and the closest passage" },
  nearness: { label: "Nearness", hint: "meaning similarity of the question and the top excerpt" },
  distinct: { label: "Distinct", hint: "how far the closest page in meaning stands above the fifth" },
  concord: { label: "Concord", hint: "1 / rank of the best keyword page in the meaning search (1: both agree)" },
  title: { label: "Title", hint: "share of the question's words the top excerpt's title, breadcrumb or file name holds" },
  rare: { label: "Rare words", hint: "share of the question's two rarest words the top excerpt holds" },
  missing: { label: "Missing", hint: "how telling the most telling question word the top excerpt lacks is" },
  depth: { label: "Depth", hint: "how far the best match stands above the tenth-best page" },
  reach: { label: "Reach", hint: "best keyword score as a share of the most the whole question could score (unseen words count)" },
  grounded: { label: "Grounded", hint: "meaning similarity of the question and the top excerpt, times the share of the question the corpus knows" },
  softcov: { label: "Soft coverage", hint: "how well the top excerpt covers each question word, synonyms counted (word-piece vectors)" },
  matched: { label: "Matched", hint: "weight of the question's words the top excerpt holds, counted in rare words (not a share)" },
  known: { label: "Known", hint: "weight of the question's words the corpus holds, counted in rare words (not a share)" },
  nqc: { label: "Spread (NQC)", hint: "spread of the ten best keyword scores as a share of the most the question could score" },
  wig: { label: "Gain (WIG)", hint: "mean of the five best keyword scores above an average passage's" },
  sentcov: { label: "Sentence coverage", hint: "share of the question's words the best single sentence of the first excerpts holds" },
  sentence: { label: "Sentence", hint: "meaning similarity of the question and the closest sentence of the first excerpts" },
  rescue: { label: "Rescue", hint: "similarity of the passage the rescue added" },
  reranker: { label: "Reranker", hint: "a reranker's score for the top excerpt" },
};

function Components({ parts }: { parts: Record<string, number | null> }) {
  const all = Object.entries(parts);
  if (!all.length) return null;
  // parts this bot's setup does not measure (no embedder, no reranker...) are named once below
  const entries = all.filter(([, v]) => v !== null) as [string, number][];
  const absent = all.filter(([, v]) => v === null).map(([k]) => COMPONENTS[k]?.label ?? k);
  return (
    <div class="components">
      <h3 id="components-heading">What the confidence is made of</h3>
      <table class="data" aria-labelledby="components-heading">
        <thead>
          <tr>
            <th scope="col">Part</th>
            <th scope="col">Value</th>
            <th scope="col">Meaning</th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([k, v]) => (
            <tr data-component={k}>
              <th scope="row">{COMPONENTS[k]?.label ?? k}</th>
              <td class="num">{v.toFixed(3)}</td>
              <td class="meaning">{COMPONENTS[k]?.hint ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {absent.length > 0 && <p class="hint" data-absent-components>Not measured here: {absent.join(", ")}.</p>}
    </div>
  );
}

function fmt(value: number | string | null): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return String(Number(value.toFixed(4)));
  return value;
}

/** Confidence as a bar, with the floor drawn across it. */
function ConfidenceMeter({ confidence, floor }: { confidence: number; floor: number }) {
  const c = Math.max(0, Math.min(1, confidence));
  const f = Math.max(0, Math.min(1, floor));
  const above = confidence >= floor;
  const text = `Confidence ${confidence.toFixed(2)} against a floor of ${floor.toFixed(2)}: ${
    above ? "at or above the floor" : "below the floor"
  }.`;
  return (
    <figure class="meter">
      <svg viewBox="0 0 300 34" width="300" height="34" role="img" aria-label={text}>
        <rect x="0" y="6" width="300" height="16" rx="3" class="meter-track" />
        <rect x="0" y="6" width={300 * c} height="16" rx="3" class={above ? "meter-fill ok" : "meter-fill low"} />
        <line x1={300 * f} x2={300 * f} y1="1" y2="27" class="meter-floor" />
        <text x={Math.min(292, Math.max(8, 300 * f))} y="33" class="meter-label" text-anchor="middle">
          floor
        </text>
      </svg>
      <figcaption>{text}</figcaption>
    </figure>
  );
}

function ExcerptCard({ e }: { e: Excerpt }) {
  const where = e.url ?? e.path;
  const signals = e.signals ? Object.entries(e.signals) : [];
  return (
    <li class="excerpt">
      <article aria-labelledby={`excerpt-${e.rank}-title`}>
        {e.breadcrumb && <p class="breadcrumb">{e.breadcrumb}</p>}
        <h3 id={`excerpt-${e.rank}-title`}>
          <span class="rank">#{e.rank}</span> {e.title || "(untitled)"}
        </h3>
        {where && (
          <p class="where">
            {e.url ? (
              <a href={e.url} rel="noopener noreferrer" target="_blank">
                {e.url}
              </a>
            ) : (
              <code>{e.path}</code>
            )}
          </p>
        )}
        <dl class="facts">
          <div>
            <dt>Score</dt>
            <dd>{e.score.toFixed(3)}</dd>
          </div>
          <div>
            <dt>Reason</dt>
            <dd>
              {e.reason}
              {REASONS[e.reason] ? ` (${REASONS[e.reason]})` : ""}
            </dd>
          </div>
          <div>
            <dt>Source</dt>
            <dd>{e.sourceType}</dd>
          </div>
          {signals.map(([k, v]) => (
            <div>
              <dt>{SIGNAL_LABELS[k] ?? k}</dt>
              <dd>{fmt(v)}</dd>
            </div>
          ))}
        </dl>
        <blockquote class="text">{e.text}</blockquote>
      </article>
    </li>
  );
}

export function TestRetrieval({ creds, announce, onApiError }: Props) {
  const [q, setQ] = useState("");
  const [audience, setAudience] = useState("customer");
  const [agent, setAgent] = useState("");
  const [result, setResult] = useState<Retrieval | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const errorBox = useRef<HTMLDivElement>(null);

  useEffect(() => heading.current?.focus(), []);

  async function submit(ev: Event) {
    ev.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api.test(creds, q, audience, agent.trim() || null);
      setResult(r);
      announce(verdict(r).sentence);
    } catch (e) {
      setResult(null);
      if (e instanceof ApiError && onApiError(e)) return;
      let text = e instanceof Error ? e.message : String(e);
      if (e instanceof ApiError && e.status === 429) {
        const wait = Number(e.details.retryAfter ?? 1);
        text = `Too many tests in a short time; try again in ${Math.ceil(wait)} second${Math.ceil(wait) === 1 ? "" : "s"}.`;
      } else if (e instanceof ApiError) {
        text = `${e.message} (${e.code})`;
      }
      setError(text);
      queueMicrotask(() => errorBox.current?.focus());
    } finally {
      setBusy(false);
    }
  }

  const v = result ? verdict(result) : null;

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Test retrieval
      </h1>
      <p>Ask a question the way an agent would: see what it would be given, and whether it would answer.</p>
      <form onSubmit={submit} noValidate class="card">
        {error && (
          <div id="test-error" class="error" role="alert" tabIndex={-1} ref={errorBox}>
            {error}
          </div>
        )}
        <div class="field">
          <label for="test-q">Question</label>
          <textarea
            id="test-q"
            name="q"
            rows={3}
            value={q}
            onInput={(e) => setQ(e.currentTarget.value)}
            aria-required="true"
            aria-describedby={error ? "test-error" : undefined}
          />
        </div>
        <fieldset class="audiences">
          <legend>Ask as</legend>
          {AUDIENCES.map((a) => (
            <div class="radio">
              <input
                type="radio"
                id={`test-audience-${a.value}`}
                name="audience"
                value={a.value}
                checked={audience === a.value}
                onChange={() => setAudience(a.value)}
                aria-describedby={`test-audience-${a.value}-hint`}
              />
              <label for={`test-audience-${a.value}`}>{a.label}</label>
              <span id={`test-audience-${a.value}-hint`} class="hint">
                {a.hint}
              </span>
            </div>
          ))}
        </fieldset>
        <div class="field">
          <label for="test-agent">Agent (optional)</label>
          <input
            id="test-agent"
            name="agent"
            value={agent}
            onInput={(e) => setAgent(e.currentTarget.value)}
            aria-describedby="test-agent-hint"
            autocomplete="off"
          />
          <p id="test-agent-hint" class="hint">
            Search only the sources this agent selects.
          </p>
        </div>
        <button type="submit" disabled={busy}>
          {busy ? "Searching…" : "Test"}
        </button>
      </form>

      {result && v && (
        <section aria-labelledby="result-heading" class="result">
          <h2 id="result-heading">Result</h2>
          <p class={`verdict verdict-${v.shape}`} data-shape={v.shape}>
            {v.sentence}
          </p>
          <ConfidenceMeter confidence={result.confidence} floor={result.floor} />
          <dl class="summary">
            <div>
              <dt>Would answer</dt>
              <dd>{result.wouldAnswer ? "yes" : "no"}</dd>
            </div>
            <div>
              <dt>Audience</dt>
              <dd>{result.audience}</dd>
            </div>
            <div>
              <dt>Operator-grounded</dt>
              <dd>{result.operatorGrounded ? "yes" : "no"}</dd>
            </div>
            <div>
              <dt>Passages searched</dt>
              <dd>{result.corpusSize.toLocaleString()}</dd>
            </div>
            {"topic" in result && (
              <div>
                <dt>Topic</dt>
                <dd>{result.topic ? result.topic.replace(/_/g, " ") : "none"}</dd>
              </div>
            )}
            {result.gate && (
              <div>
                <dt>Gate</dt>
                <dd>
                  {result.gate.passed ? "passed" : "closed"}
                  {result.gate.reason ? `: ${result.gate.reason}` : ""}
                </dd>
              </div>
            )}
          </dl>
          {result.confidenceComponents && <Components parts={result.confidenceComponents} />}
          {result.excerpts.length > 0 && (
            <>
              <h2 id="excerpts-heading">Excerpts found, best first</h2>
              <ol class="excerpts" aria-labelledby="excerpts-heading">
                {result.excerpts.map((e) => (
                  <ExcerptCard e={e} />
                ))}
              </ol>
            </>
          )}
        </section>
      )}
    </main>
  );
}
