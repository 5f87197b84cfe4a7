import { useEffect, useRef, useState } from "preact/hooks";

import { ApiError, type Credentials, type Source, api, upload } from "./api";

// The API validates every field; this form sends what was typed and shows its messages,
// next to the field they are about when the code names one.
const FIELD_BY_CODE: Record<string, string> = {
  invalid_name: "name",
  invalid_priority: "priority",
  invalid_visibility: "visibility",
  invalid_origin: "origins",
  invalid_start_url: "startUrls",
  invalid_refresh_interval: "refreshHours",
  invalid_content_type: "file",
  file_too_large: "file",
  unsupported_type: "file",
  empty_upload: "file",
};

const TYPES: { value: string; label: string; visibilities: string[] }[] = [
  { value: "article", label: "Article", visibilities: [] },
  { value: "instruction", label: "Instruction", visibilities: ["agent", "operator"] },
  { value: "fact", label: "Fact", visibilities: ["agent", "operator"] },
  { value: "faq", label: "FAQ", visibilities: ["agent", "operator", "public"] },
  { value: "website", label: "Website", visibilities: ["agent", "operator", "public"] },
  { value: "file", label: "File", visibilities: ["agent", "operator"] },
];

const VISIBILITY_HINTS: Record<string, string> = {
  public: "public: help-center surfaces and agents",
  agent: "agent: agents answering customers, never public surfaces",
  operator: "operator: operators only",
};

const TYPE_BY_EXTENSION: Record<string, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  txt: "text/plain",
  md: "text/markdown",
  markdown: "text/markdown",
  html: "text/html",
  htm: "text/html",
  xhtml: "application/xhtml+xml",
};

function contentTypeOf(file: File): string {
  const ext = file.name.split(".").pop()?.toLowerCase() ?? "";
  return TYPE_BY_EXTENSION[ext] ?? (file.type || "application/octet-stream");
}

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

type Props = {
  creds: Credentials;
  /** a question to answer: the form opens as a draft article about it */
  draft?: string | null;
  onCreated: (s: Source, note: string) => void;
  onApiError: (e: ApiError) => boolean;
};

type FieldError = { field: string | null; code: string; message: string };

export function CreateSource({ creds, draft, onCreated, onApiError }: Props) {
  const [type, setType] = useState("article");
  const [name, setName] = useState(draft ? draft.slice(0, 120) : "");
  const [priority, setPriority] = useState("0");
  const [visibility, setVisibility] = useState("agent");
  const [title, setTitle] = useState(draft ? draft.slice(0, 120) : "");
  const [body, setBody] = useState(draft ? `Customers ask: “${draft}”\n\n` : "");
  const [state, setState] = useState(draft ? "draft" : "published");
  const [text, setText] = useState("");
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [entries, setEntries] = useState([{ question: "", answer: "" }]);
  const [origins, setOrigins] = useState("");
  const [startUrls, setStartUrls] = useState("");
  const [refreshHours, setRefreshHours] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<FieldError | null>(null);
  const [busy, setBusy] = useState(false);
  const errorBox = useRef<HTMLDivElement>(null);
  const form = useRef<HTMLFormElement>(null);

  // opened from a gap: show the prefilled form and put the cursor in its body
  useEffect(() => {
    if (!draft) return;
    const field = form.current?.querySelector<HTMLTextAreaElement>("#create-body");
    field?.scrollIntoView({ block: "center" });
    field?.focus();
  }, [draft]);

  const kind = TYPES.find((t) => t.value === type) ?? TYPES[0];
  const visibilityChoice = kind.visibilities.includes(visibility) ? visibility : kind.visibilities[0];

  function config(): Record<string, unknown> {
    switch (type) {
      case "article":
        return { title, body, state };
      case "instruction":
        return { text };
      case "fact":
        return { key, value };
      case "faq":
        return { entries: entries.filter((e) => e.question.trim() || e.answer.trim()) };
      case "website": {
        const out: Record<string, unknown> = { origins: lines(origins), startUrls: lines(startUrls) };
        if (refreshHours.trim()) out.refreshEverySeconds = Math.round(Number(refreshHours) * 3600);
        return out;
      }
      case "file":
        return file ? { filename: file.name, contentType: contentTypeOf(file) } : {};
      default:
        return {};
    }
  }

  function fail(e: unknown) {
    if (e instanceof ApiError) {
      if (onApiError(e)) return;
      setError({ field: FIELD_BY_CODE[e.code] ?? null, code: e.code, message: e.message });
    } else {
      setError({ field: null, code: "error", message: String(e) });
    }
    queueMicrotask(() => errorBox.current?.focus());
  }

  function reset() {
    setName("");
    setTitle("");
    setBody("");
    setText("");
    setKey("");
    setValue("");
    setEntries([{ question: "", answer: "" }]);
    setOrigins("");
    setStartUrls("");
    setRefreshHours("");
    setFile(null);
    const input = form.current?.querySelector<HTMLInputElement>("input[type=file]");
    if (input) input.value = "";
  }

  async function submit(ev: Event) {
    ev.preventDefault();
    setError(null);
    if (type === "file" && !file) {
      setError({ field: "file", code: "no_file", message: "Choose a file to upload." });
      queueMicrotask(() => errorBox.current?.focus());
      return;
    }
    const payload: Record<string, unknown> = { type, name: name.trim() || (file?.name ?? ""), config: config() };
    if (priority.trim() !== "") payload.priority = Number.isNaN(Number(priority)) ? priority : Number(priority);
    if (type !== "article") payload.visibility = visibilityChoice;
    setBusy(true);
    try {
      let source = await api.create(creds, payload);
      let note = `Created “${source.name}”; it is queued for indexing.`;
      if (type === "file" && file) {
        setProgress(0);
        try {
          source = await upload(creds, source.id, file, contentTypeOf(file), setProgress);
          note = `Uploaded “${file.name}” to “${source.name}”; it is queued for indexing.`;
        } catch (e) {
          onCreated(source, `Created “${source.name}”, but the upload failed.`);
          throw e;
        }
      }
      reset();
      onCreated(source, note);
    } catch (e) {
      fail(e);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  }

  function fieldProps(field: string, hint?: string) {
    const describedBy = [hint, error?.field === field ? "create-error" : null].filter(Boolean).join(" ");
    return {
      id: `create-${field}`,
      name: field,
      "aria-invalid": error?.field === field ? ("true" as const) : undefined,
      "aria-describedby": describedBy || undefined,
    };
  }

  return (
    <section aria-labelledby="create-heading" class="card">
      <h2 id="create-heading">Add a source</h2>
      <form ref={form} onSubmit={submit} noValidate>
        {error && (
          <div id="create-error" class="error" role="alert" tabIndex={-1} ref={errorBox}>
            <strong>Not created:</strong> {error.message} <span class="code">({error.code})</span>
          </div>
        )}
        <div class="row">
          <div class="field">
            <label for="create-type">Type</label>
            <select id="create-type" name="type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
              {TYPES.map((t) => (
                <option value={t.value}>{t.label}</option>
              ))}
            </select>
          </div>
          <div class="field grow">
            <label for="create-name">Name</label>
            <input
              {...fieldProps("name", "create-name-hint")}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
              aria-required={type === "file" ? undefined : "true"}
            />
            <p id="create-name-hint" class="hint">
              At most 120 characters{type === "file" ? "; the file's name when left empty" : ""}.
            </p>
          </div>
          <div class="field">
            <label for="create-priority">Priority</label>
            <input
              {...fieldProps("priority", "create-priority-hint")}
              type="number"
              inputMode="numeric"
              value={priority}
              onInput={(e) => setPriority(e.currentTarget.value)}
            />
            <p id="create-priority-hint" class="hint">
              −100 to 100; breaks ties between equal matches.
            </p>
          </div>
          {kind.visibilities.length > 0 && (
            <div class="field">
              <label for="create-visibility">Visibility</label>
              <select
                {...fieldProps("visibility", "create-visibility-hint")}
                value={visibilityChoice}
                onChange={(e) => setVisibility(e.currentTarget.value)}
              >
                {kind.visibilities.map((v) => (
                  <option value={v}>{v}</option>
                ))}
              </select>
              <p id="create-visibility-hint" class="hint">
                {VISIBILITY_HINTS[visibilityChoice]}
              </p>
            </div>
          )}
        </div>

        {type === "article" && (
          <>
            <div class="field">
              <label for="create-title">Title</label>
              <input {...fieldProps("title")} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="create-body">Body (Markdown)</label>
              <textarea
                {...fieldProps("body")}
                rows={6}
                value={body}
                onInput={(e) => setBody(e.currentTarget.value)}
                aria-required="true"
              />
            </div>
            <div class="field">
              <label for="create-state">State</label>
              <select
                {...fieldProps("state", "create-state-hint")}
                value={state}
                onChange={(e) => setState(e.currentTarget.value)}
              >
                <option value="published">published</option>
                <option value="internal">internal</option>
                <option value="draft">draft</option>
              </select>
              <p id="create-state-hint" class="hint">
                Published articles are public, internal ones reach agents only, drafts are not searchable.
              </p>
            </div>
          </>
        )}

        {type === "instruction" && (
          <div class="field">
            <label for="create-text">Instruction</label>
            <textarea
              {...fieldProps("text")}
              rows={4}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
              aria-required="true"
            />
          </div>
        )}

        {type === "fact" && (
          <div class="row">
            <div class="field">
              <label for="create-key">Key</label>
              <input {...fieldProps("key")} value={key} onInput={(e) => setKey(e.currentTarget.value)} aria-required="true" />
            </div>
            <div class="field grow">
              <label for="create-value">Value</label>
              <input
                {...fieldProps("value")}
                value={value}
                onInput={(e) => setValue(e.currentTarget.value)}
                aria-required="true"
              />
            </div>
          </div>
        )}

        {type === "faq" && (
          <fieldset>
            <legend>Questions and answers</legend>
            {entries.map((entry, i) => (
              <div class="row faq-entry">
                <div class="field grow">
                  <label for={`create-faq-q-${i}`}>Question {i + 1}</label>
                  <input
                    id={`create-faq-q-${i}`}
                    value={entry.question}
                    onInput={(e) => {
                      const next = [...entries];
                      next[i] = { ...entry, question: e.currentTarget.value };
                      setEntries(next);
                    }}
                  />
                </div>
                <div class="field grow">
                  <label for={`create-faq-a-${i}`}>Answer {i + 1}</label>
                  <textarea
                    id={`create-faq-a-${i}`}
                    rows={2}
                    value={entry.answer}
                    onInput={(e) => {
                      const next = [...entries];
                      next[i] = { ...entry, answer: e.currentTarget.value };
                      setEntries(next);
                    }}
                  />
                </div>
              </div>
            ))}
            <button type="button" class="secondary" onClick={() => setEntries([...entries, { question: "", answer: "" }])}>
              Add another question
            </button>
          </fieldset>
        )}

        {type === "website" && (
          <>
            <div class="field">
              <label for="create-origins">Allowed origins (one per line)</label>
              <textarea
                {...fieldProps("origins", "create-origins-hint")}
                rows={2}
                value={origins}
                onInput={(e) => setOrigins(e.currentTarget.value)}
                aria-required="true"
              />
              <p id="create-origins-hint" class="hint">
                For example https://help.example.com — pages outside these origins are never fetched.
              </p>
            </div>
            <div class="field">
              <label for="create-startUrls">Start pages (one per line)</label>
              <textarea
                {...fieldProps("startUrls")}
                rows={2}
                value={startUrls}
                onInput={(e) => setStartUrls(e.currentTarget.value)}
                aria-required="true"
              />
            </div>
            <div class="field">
              <label for="create-refreshHours">Refresh every (hours, optional)</label>
              <input
                {...fieldProps("refreshHours")}
                type="number"
                inputMode="decimal"
                value={refreshHours}
                onInput={(e) => setRefreshHours(e.currentTarget.value)}
              />
            </div>
          </>
        )}

        {type === "file" && (
          <div class="field">
            <label for="create-file">File</label>
            <input
              {...fieldProps("file", "create-file-hint")}
              type="file"
              accept=".pdf,.docx,.xlsx,.pptx,.txt,.md,.markdown,.html,.htm,.xhtml"
              onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
              aria-required="true"
            />
            <p id="create-file-hint" class="hint">
              PDF, Word, Excel, PowerPoint, HTML, Markdown or plain text; at most 8 MB.
            </p>
          </div>
        )}

        {progress !== null && (
          <div class="field">
            <label for="create-progress">Upload</label>
            <progress id="create-progress" max={100} value={Math.round(progress * 100)}>
              {Math.round(progress * 100)}%
            </progress>
            <span aria-hidden="true"> {Math.round(progress * 100)}%</span>
          </div>
        )}

        <button type="submit" disabled={busy}>
          {busy ? "Creating…" : type === "file" ? "Create and upload" : "Create source"}
        </button>
      </form>
    </section>
  );
}
