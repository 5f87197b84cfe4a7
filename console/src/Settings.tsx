import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { api, ApiError, errorText, type ScreenProps, type Settings as BotSettings } from "./api";

type Props = ScreenProps;

const EMBEDDERS: { value: string; label: string }[] = [
  { value: "", label: "the deployment's default" },
  { value: "none", label: "none (keyword search only)" },
  { value: "hashing", label: "hashing (deterministic, for tests)" },
  { value: "local", label: "local (all-MiniLM-L6-v2 on the CPU)" },
  { value: "bedrock", label: "bedrock" },
  { value: "openai", label: "openai-compatible endpoint" },
];

/** Fields this screen edits; any other field the API returns is shown as it is. */
const KNOWN = new Set(["bot", "products", "scopeToProducts", "floor", "topK", "rerank", "embedder", "embedderOptions", "upstream", "answer", "reindexNeeded"]);

/** The topic gate's topics; this screen edits the terms each adds to its defaults. */
const TOPICS: { key: string; label: string }[] = [
  { key: "fees", label: "Fees" },
  { key: "limits", label: "Limits" },
  { key: "processing_time", label: "Processing time" },
];

type Answer = {
  gate?: boolean;
  gapRetentionDays?: number;
  topics?: Record<string, Record<string, string[]> | undefined>;
  [other: string]: unknown;
};

function answerOf(s: BotSettings): Answer {
  return (s.answer && typeof s.answer === "object" ? s.answer : {}) as Answer;
}

/** Comma-separated terms as a list (empty pieces dropped). */
function terms(text: string): string[] {
  return text
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
}

type Form = {
  products: string;
  scopeToProducts: boolean;
  floor: string;
  topK: string;
  rerank: boolean;
  gate: boolean;
  gapDays: string;
  topicTerms: Record<string, string>;
  embedder: string;
  baseUrl: string;
  model: string;
  modelId: string;
  dimensions: string;
  apiKey: string;
  upstreamUrl: string;
  upstreamBot: string;
  upstreamToken: string;
};

function formOf(s: BotSettings): Form {
  return {
    products: s.products.join("\n"),
    scopeToProducts: s.scopeToProducts,
    floor: String(s.floor),
    topK: String(s.topK),
    rerank: Boolean(s.rerank),
    gate: answerOf(s).gate !== false,
    gapDays: answerOf(s).gapRetentionDays !== undefined ? String(answerOf(s).gapRetentionDays) : "",
    topicTerms: Object.fromEntries(TOPICS.map((t) => [t.key, (answerOf(s).topics?.[t.key]?.extraStrong ?? []).join(", ")])),
    embedder: s.embedder ?? "",
    baseUrl: s.embedderOptions.baseUrl ?? "",
    model: s.embedderOptions.model ?? "",
    modelId: s.embedderOptions.modelId ?? "",
    dimensions: s.embedderOptions.dimensions ? String(s.embedderOptions.dimensions) : "",
    apiKey: "",
    upstreamUrl: s.upstream?.url ?? "",
    upstreamBot: s.upstream?.bot ?? "default",
    upstreamToken: "",
  };
}

/** The form fields an API message is about (its first word names the setting). */
const FIELDS_OF: Record<string, string[]> = {
  floor: ["set-floor"],
  topK: ["set-topk"],
  rerank: ["set-rerank"],
  "answer.gate": ["set-gate"],
  "answer.gapRetentionDays": ["set-gapdays"],
  ...Object.fromEntries(TOPICS.map((t) => [`answer.topics.${t.key}`, [`set-topic-${t.key}`]])),
  // the classifier's own refusal ("answer: ...") is about the terms
  answer: TOPICS.map((t) => `set-topic-${t.key}`),
  products: ["set-products"],
  scopeToProducts: ["set-scope"],
  embedder: ["set-embedder"],
  embedderOptions: ["set-baseurl", "set-model", "set-modelid", "set-dims", "set-apikey"],
  upstream: ["set-upurl", "set-upbot", "set-uptoken"],
};

function invalidFields(message: string | null): Set<string> {
  if (!message) return new Set();
  // the longest setting name the message starts with ("answer.gapRetentionDays must be ...")
  const first = Object.keys(FIELDS_OF)
    .filter((k) => new RegExp(`^${k.replace(/\./g, "\\.")}(?![A-Za-z])`).test(message))
    .sort((a, b) => b.length - a.length)[0];
  if (first) return new Set(FIELDS_OF[first]);
  // "the openai embedder needs embedderOptions.baseUrl ...": every setting the message names
  return new Set(Object.keys(FIELDS_OF).filter((k) => message.includes(k)).flatMap((k) => FIELDS_OF[k]));
}

/** What changed, as a PATCH body: numbers are sent as typed so the API judges them. */
function patchOf(settings: BotSettings, before: Form, f: Form): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const num = (v: string) => (v.trim() === "" || Number.isNaN(Number(v)) ? v : Number(v));
  if (f.products !== before.products)
    out.products = f.products
      .split("\n")
      .map((x) => x.trim())
      .filter(Boolean);
  if (f.scopeToProducts !== before.scopeToProducts) out.scopeToProducts = f.scopeToProducts;
  if (f.floor !== before.floor) out.floor = num(f.floor);
  if (f.topK !== before.topK) out.topK = num(f.topK);
  if (f.rerank !== before.rerank) out.rerank = f.rerank;
  const topicsChanged = TOPICS.some((t) => f.topicTerms[t.key] !== before.topicTerms[t.key]);
  if (f.gate !== before.gate || f.gapDays !== before.gapDays || topicsChanged) {
    // `answer` replaces the stored answer settings: start from them, change what was edited
    const answer: Answer = structuredClone(answerOf(settings));
    if (f.gate !== before.gate) answer.gate = f.gate;
    if (f.gapDays !== before.gapDays) {
      if (f.gapDays.trim() === "") delete answer.gapRetentionDays;
      else answer.gapRetentionDays = num(f.gapDays) as number;
    }
    if (topicsChanged) {
      const topics = { ...(answer.topics ?? {}) };
      for (const t of TOPICS) {
        if (f.topicTerms[t.key] === before.topicTerms[t.key]) continue;
        const rest = { ...(topics[t.key] ?? {}) };
        const list = terms(f.topicTerms[t.key]);
        if (list.length) rest.extraStrong = list;
        else delete rest.extraStrong;
        if (Object.keys(rest).length) topics[t.key] = rest;
        else delete topics[t.key];
      }
      if (Object.keys(topics).length) answer.topics = topics;
      else delete answer.topics;
    }
    out.answer = answer;
  }
  if (f.embedder !== before.embedder) out.embedder = f.embedder || null;
  const optKeys = ["baseUrl", "model", "modelId", "dimensions"] as const;
  if (optKeys.some((k) => f[k] !== before[k]) || f.apiKey) {
    const opts: Record<string, unknown> = {};
    if (f.baseUrl.trim()) opts.baseUrl = f.baseUrl.trim();
    if (f.model.trim()) opts.model = f.model.trim();
    if (f.modelId.trim()) opts.modelId = f.modelId.trim();
    if (f.dimensions.trim()) opts.dimensions = num(f.dimensions);
    if (f.apiKey) opts.apiKey = f.apiKey;
    out.embedderOptions = opts;
  }
  if (f.upstreamUrl !== before.upstreamUrl || f.upstreamBot !== before.upstreamBot || f.upstreamToken) {
    if (!f.upstreamUrl.trim()) out.upstream = null;
    else {
      const up: Record<string, unknown> = { url: f.upstreamUrl.trim(), bot: f.upstreamBot.trim() || "default" };
      if (f.upstreamToken) up.token = f.upstreamToken;
      out.upstream = up;
    }
  }
  return out;
}

export function Settings({ creds, canWrite, announce, onApiError }: Props) {
  const [settings, setSettings] = useState<BotSettings | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [reindexNeeded, setReindexNeeded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [inUse, setInUse] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const errorBox = useRef<HTMLParagraphElement>(null);

  useEffect(() => heading.current?.focus(), []);

  const load = useCallback(async () => {
    try {
      const s = await api.settings(creds);
      // the embedder the index is searched with now (the setting may name the default)
      void api.index(creds).then(
        (i) => setInUse(i.embedder),
        () => setInUse(null),
      );
      setSettings(s);
      setForm(formOf(s));
      setLoadError(null);
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      setLoadError(errorText(e));
    }
  }, [creds, onApiError]);
  useEffect(() => void load(), [load]);

  const set = <K extends keyof Form>(k: K, v: Form[K]) => setForm((prev) => (prev ? { ...prev, [k]: v } : prev));

  async function save(ev: Event) {
    ev.preventDefault();
    if (!settings || !form) return;
    const patch = patchOf(settings, formOf(settings), form);
    if (Object.keys(patch).length === 0) {
      announce("Nothing changed.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const s = await api.patchSettings(creds, patch);
      setSettings(s);
      setForm(formOf(s));
      setReindexNeeded(Boolean(s.reindexNeeded));
      announce(`Settings saved: ${Object.keys(patch).join(", ")}.${s.reindexNeeded ? " A reindex is needed." : ""}`);
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      setError(errorText(e));
      queueMicrotask(() => errorBox.current?.focus());
    } finally {
      setBusy(false);
    }
  }

  async function reindex() {
    try {
      await api.reindex(creds);
      setReindexNeeded(false);
      announce("Reindex queued: the Sources screen shows its progress.");
    } catch (e) {
      if (e instanceof ApiError && onApiError(e)) return;
      setError(errorText(e));
    }
  }

  const bad = invalidFields(error);
  /** aria-invalid and the error's id on a field the API's message is about */
  const mark = (id: string, hint?: string) => ({
    "aria-invalid": bad.has(id) ? ("true" as const) : undefined,
    "aria-describedby": [hint, bad.has(id) ? "settings-error" : null].filter(Boolean).join(" ") || undefined,
  });
  const others = settings ? Object.entries(settings).filter(([k]) => !KNOWN.has(k)) : [];

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Settings
      </h1>
      {loadError && (
        <p class="error" role="alert">
          The settings could not be loaded: {loadError}
        </p>
      )}
      {!form && !loadError && <p aria-busy="true">Loading settings…</p>}
      {reindexNeeded && (
        <div class="notice" role="status">
          The embedder changed: passages keep their old vectors until a reindex.{" "}
          {canWrite !== false && (
            <button type="button" onClick={() => void reindex()}>
              Reindex now
            </button>
          )}
        </div>
      )}
      {form && settings && (
        <form class="card settings" onSubmit={save} noValidate>
          <p class="hint">Only the fields you change are sent. Messages below are the API's own.</p>
          {error && (
            <p id="settings-error" class="error" role="alert" tabIndex={-1} ref={errorBox}>
              {error}
            </p>
          )}
          <fieldset>
            <legend>Answering</legend>
            <div class="row">
              <div class="field">
                <label for="set-floor">Confidence floor</label>
                <input id="set-floor" {...mark("set-floor", "set-floor-hint")} inputMode="decimal" value={form.floor} onInput={(e) => set("floor", e.currentTarget.value)} />
                <p id="set-floor-hint" class="hint">
                  0 to 1: below it the agent would not answer.
                </p>
              </div>
              <div class="field">
                <label for="set-topk">Excerpts per answer</label>
                <input id="set-topk" {...mark("set-topk", "set-topk-hint")} inputMode="numeric" value={form.topK} onInput={(e) => set("topK", e.currentTarget.value)} />
                <p id="set-topk-hint" class="hint">
                  1 to 12.
                </p>
              </div>
            </div>
            <div class="radio">
              <input id="set-rerank" {...mark("set-rerank", "set-rerank-hint")} type="checkbox" checked={form.rerank} onChange={(e) => set("rerank", e.currentTarget.checked)} />
              <label for="set-rerank">Rerank the first excerpts</label>
            </div>
            <p id="set-rerank-hint" class="hint">
              With the deployment's reranker, when it has one; without one this changes nothing.
            </p>
          </fieldset>
          <fieldset>
            <legend>Answer time</legend>
            <div class="row">
              <div class="field">
                <div class="radio">
                  <input id="set-gate" {...mark("set-gate", "set-gate-hint")} type="checkbox" checked={form.gate} onChange={(e) => set("gate", e.currentTarget.checked)} />
                  <label for="set-gate">Topic gate on</label>
                </div>
                <p id="set-gate-hint" class="hint">
                  Fees, limits and processing times are answered only from operator-written excerpts.
                </p>
              </div>
              <div class="field">
                <label for="set-gapdays">Keep gaps for (days)</label>
                <input id="set-gapdays" {...mark("set-gapdays", "set-gapdays-hint")} inputMode="numeric" value={form.gapDays} onInput={(e) => set("gapDays", e.currentTarget.value)} />
                <p id="set-gapdays-hint" class="hint">
                  1 to 365; empty: the default (90).
                </p>
              </div>
            </div>
            <div class="row">
              {TOPICS.map((t) => (
                <div class="field grow">
                  <label for={`set-topic-${t.key}`}>{t.label}: extra terms</label>
                  <input
                    id={`set-topic-${t.key}`}
                    {...mark(`set-topic-${t.key}`, "set-topic-hint")}
                    value={form.topicTerms[t.key]}
                    onInput={(e) => {
                      const v = e.currentTarget.value;
                      setForm((prev) => (prev ? { ...prev, topicTerms: { ...prev.topicTerms, [t.key]: v } } : prev));
                    }}
                  />
                </div>
              ))}
            </div>
            <p id="set-topic-hint" class="hint">
              Comma-separated words or phrases that mark a question as this topic, added to the built-in ones.
            </p>
            {Object.keys(answerOf(settings)).some((k) => !["gate", "gapRetentionDays", "topics"].includes(k)) && (
              <p class="hint">
                Also stored (kept as is): <code>{JSON.stringify(Object.fromEntries(Object.entries(answerOf(settings)).filter(([k]) => !["gate", "gapRetentionDays", "topics"].includes(k))))}</code>
              </p>
            )}
          </fieldset>
          <fieldset>
            <legend>Products</legend>
            <div class="field">
              <label for="set-products">Products this bot runs (one per line)</label>
              <textarea id="set-products" {...mark("set-products")} rows={3} value={form.products} onInput={(e) => set("products", e.currentTarget.value)} />
            </div>
            <div class="radio">
              <input id="set-scope" {...mark("set-scope")} type="checkbox" checked={form.scopeToProducts} onChange={(e) => set("scopeToProducts", e.currentTarget.checked)} />
              <label for="set-scope">Leave out packs of other products</label>
            </div>
          </fieldset>
          <fieldset>
            <legend>Embedder</legend>
            <div class="row">
              <div class="field">
                <label for="set-embedder">Embedder</label>
                <select id="set-embedder" {...mark("set-embedder", "set-embedder-hint")} value={form.embedder} onChange={(e) => set("embedder", e.currentTarget.value)}>
                  {EMBEDDERS.map((x) => (
                    <option value={x.value}>{x.label}</option>
                  ))}
                </select>
                <p id="set-embedder-hint" class="hint">
                  {inUse ? `In use now: ${inUse}. ` : ""}A change applies from the next reindex.
                </p>
              </div>
              <div class="field grow">
                <label for="set-baseurl">Base URL (https)</label>
                <input id="set-baseurl" {...mark("set-baseurl")} value={form.baseUrl} onInput={(e) => set("baseUrl", e.currentTarget.value)} />
              </div>
            </div>
            <div class="row">
              <div class="field">
                <label for="set-model">Model</label>
                <input id="set-model" {...mark("set-model")} value={form.model} onInput={(e) => set("model", e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="set-modelid">Model id (Bedrock)</label>
                <input id="set-modelid" {...mark("set-modelid")} value={form.modelId} onInput={(e) => set("modelId", e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="set-dims">Dimensions</label>
                <input id="set-dims" {...mark("set-dims")} inputMode="numeric" value={form.dimensions} onInput={(e) => set("dimensions", e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="set-apikey">API key</label>
                <input id="set-apikey" {...mark("set-apikey", "set-apikey-hint")} type="password" autocomplete="off" value={form.apiKey} onInput={(e) => set("apiKey", e.currentTarget.value)} />
                <p id="set-apikey-hint" class="hint">
                  {settings.embedderOptions.apiKeySet ? "A key is set; leave empty to keep it." : "No key set."} Never shown.
                </p>
              </div>
            </div>
          </fieldset>
          <fieldset>
            <legend>Upstream kb</legend>
            <div class="row">
              <div class="field grow">
                <label for="set-upurl">Upstream URL (https; empty: none)</label>
                <input id="set-upurl" {...mark("set-upurl")} value={form.upstreamUrl} onInput={(e) => set("upstreamUrl", e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="set-upbot">Upstream bot</label>
                <input id="set-upbot" {...mark("set-upbot")} value={form.upstreamBot} onInput={(e) => set("upstreamBot", e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="set-uptoken">Upstream token</label>
                <input id="set-uptoken" {...mark("set-uptoken", "set-uptoken-hint")} type="password" autocomplete="off" value={form.upstreamToken} onInput={(e) => set("upstreamToken", e.currentTarget.value)} />
                <p id="set-uptoken-hint" class="hint">
                  {settings.upstream?.tokenSet ? "A token is set; leave empty to keep it." : "No token set."}
                </p>
              </div>
            </div>
          </fieldset>
          {others.length > 0 && (
            <fieldset>
              <legend>Other settings (read only here)</legend>
              <dl class="summary">
                {others.map(([k, v]) => (
                  <div>
                    <dt>{k}</dt>
                    <dd>
                      <code>{JSON.stringify(v)}</code>
                    </dd>
                  </div>
                ))}
              </dl>
            </fieldset>
          )}
          <div class="buttons">
            <button type="submit" disabled={busy}>
              {busy ? "Saving…" : "Save settings"}
            </button>
            <button type="button" class="secondary" onClick={() => setForm(formOf(settings))}>
              Undo changes
            </button>
          </div>
        </form>
      )}
    </main>
  );
}
