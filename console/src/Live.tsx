import { useCallback, useEffect, useRef, useState } from "preact/hooks";

import { api, ApiError, type Credentials, type LiveRow, type LiveSource, type ScreenProps } from "./api";
import { useRead, useSubmit } from "./calls";
import { usePolling } from "./polling";

type Props = ScreenProps;

/** The row fields the API accepts, in the order they are drawn (answer.live.LiveRow). */
const COLUMNS: { key: string; label: string }[] = [
  { key: "area", label: "Area" },
  { key: "name", label: "Name" },
  { key: "code", label: "Code" },
  { key: "network", label: "Network" },
  { key: "fixedFee", label: "Fixed fee" },
  { key: "percentageFee", label: "% fee" },
  { key: "minAmount", label: "Min" },
  { key: "maxAmount", label: "Max" },
  { key: "processingTime", label: "Processing time" },
  { key: "enabled", label: "Enabled" },
];

const EXAMPLE = `[
  {"area": "Deposits", "name": "Bitcoin", "code": "BTC", "network": "Bitcoin",
   "fixedFee": 0, "minAmount": "0.0001 BTC", "processingTime": "3 confirmations"}
]`;

const EXAMPLE_CSV = `area,name,code,network,fixedFee,minAmount,processingTime
Deposits,Bitcoin,BTC,Bitcoin,0,0.0001 BTC,3 confirmations`;

/** The fields whose CSV cells are numbers when they read as one (the API also takes text). */
const AMOUNTS = new Set(["fixedFee", "percentageFee", "minAmount", "maxAmount"]);

type Format = "json" | "csv";

/** A CSV cell as the value PUT sends: amounts as numbers when they are one, `enabled` as true
 * or false when it says so; anything else stays text, for the API to judge. */
function csvValue(field: string, cell: string): unknown {
  const v = cell.trim();
  if (AMOUNTS.has(field) && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) return Number(v);
  if (field === "enabled") {
    const b = v.toLowerCase();
    if (["true", "yes", "1"].includes(b)) return true;
    if (["false", "no", "0"].includes(b)) return false;
  }
  return v;
}

/** CSV with a header row of field names, as the rows PUT sends; an empty cell leaves the
 * field out. Parsed with Papa Parse, loaded only when CSV is used. */
async function parseCsv(text: string): Promise<{ rows: LiveRow[] } | { problem: string }> {
  const { default: Papa } = await import("papaparse");
  const out = Papa.parse<string[]>(text.trim(), { skipEmptyLines: "greedy" });
  if (out.errors.length) {
    const e = out.errors[0];
    return { problem: `This is not CSV: ${e.message}${e.row !== undefined ? ` (row ${e.row})` : ""}.` };
  }
  const [header, ...lines] = out.data;
  if (!header || header.every((h) => !h.trim())) return { problem: "The first line must name the fields: area,name,…" };
  const names = header.map((h) => h.trim());
  const blank = names.indexOf("");
  if (blank >= 0) return { problem: `Column ${blank + 1} of the header has no field name.` };
  const rows = lines.map((line) => {
    const r: Record<string, unknown> = {};
    names.forEach((n, i) => {
      if ((line[i] ?? "").trim() !== "") r[n] = csvValue(n, line[i]);
    });
    return r as LiveRow;
  });
  return { rows };
}

function cell(v: unknown): string {
  if (v === undefined || v === null) return "—";
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

/** What the editor holds, read as rows: a JSON array of objects (the API checks each field). */
function parseRows(text: string): { rows: LiveRow[] } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `This is not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (!Array.isArray(value)) return { problem: "The rows must be a JSON array: [ {…}, {…} ]." };
  const bad = value.findIndex((r) => typeof r !== "object" || r === null || Array.isArray(r));
  if (bad >= 0) return { problem: `Row ${bad} must be an object with fields such as "area" and "name".` };
  return { rows: value as LiveRow[] };
}

type EditorProps = {
  creds: Credentials;
  source: LiveSource;
  table: string | null;
  rows: LiveRow[];
  onDone: (note: string) => void;
  onCancel: () => void;
  onApiError: (e: ApiError) => boolean;
};

function TableEditor({ creds, source, table, rows, onDone, onCancel, onApiError }: EditorProps) {
  const [name, setName] = useState(table ?? "");
  const [format, setFormat] = useState<Format>("json");
  const [text, setText] = useState(rows.length ? JSON.stringify(rows, null, 2) : EXAMPLE);
  const { busy, error, errorBox, fail, run } = useSubmit(onApiError);
  const first = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const id = `live-${source.sourceId}-${table ?? "new"}`;

  useEffect(() => first.current?.focus(), []);

  /** The rows in the editor, rewritten in the other format when they read as rows (the
   * untouched example follows too); text that does not read is left as it is. */
  async function switchTo(f: Format) {
    setFormat(f);
    if (text === EXAMPLE || text === EXAMPLE_CSV) return setText(f === "csv" ? EXAMPLE_CSV : EXAMPLE);
    if (f === format) return;
    if (f === "json") {
      const parsed = await parseCsv(text);
      if ("rows" in parsed) setText(JSON.stringify(parsed.rows, null, 2));
      return;
    }
    const parsed = parseRows(text);
    if (!("rows" in parsed)) return;
    const { default: Papa } = await import("papaparse");
    const columns = [...new Set(parsed.rows.flatMap((r) => Object.keys(r)))];
    setText(Papa.unparse(parsed.rows, { columns, newline: "\n" }));
  }

  async function save(ev: Event) {
    ev.preventDefault();
    const parsed = format === "csv" ? await parseCsv(text) : parseRows(text);
    if ("problem" in parsed) return fail(parsed.problem);
    await run(async () => {
      const out = await api.putLive(creds, name.trim(), source.sourceId, parsed.rows);
      onDone(`Table “${out.table}” of “${source.name}” replaced: ${out.rows} rows, ${out.enabled} enabled.`);
    });
  }

  return (
    <form class="card live-editor" onSubmit={save} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{table ? `Replace table “${table}”` : `New table in “${source.name}”`}</h3>
      {error && (
        <p id={`${id}-error`} class="error" role="alert" tabIndex={-1} ref={errorBox}>
          {error}
        </p>
      )}
      {!table && (
        <div class="field">
          <label for={`${id}-name`}>Table name</label>
          <input
            id={`${id}-name`}
            ref={first}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            aria-describedby={`${id}-name-hint`}
            autocomplete="off"
          />
          <p id={`${id}-name-hint`} class="hint">
            1-64 lower-case letters, digits, - or _{source.requiredTables.length ? `; this source expects ${source.requiredTables.join(", ")}` : ""}.
          </p>
        </div>
      )}
      <fieldset class="radio-group">
        <legend>Format</legend>
        {(["json", "csv"] as const).map((f) => (
          <span class="radio">
            <input
              type="radio"
              id={`${id}-format-${f}`}
              name={`${id}-format`}
              checked={format === f}
              onChange={() => void switchTo(f)}
            />
            <label for={`${id}-format-${f}`}>{f === "json" ? "JSON array" : "CSV (header row: field names)"}</label>
          </span>
        ))}
      </fieldset>
      <div class="field">
        <label for={`${id}-rows`}>Rows ({format === "csv" ? "CSV" : "JSON"})</label>
        <textarea
          id={`${id}-rows`}
          ref={table ? first : undefined}
          class="code-editor"
          rows={Math.min(24, Math.max(8, text.split("\n").length + 1))}
          value={text}
          spellcheck={false}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={`${id}-rows-hint${error ? ` ${id}-error` : ""}`}
        />
        <p id={`${id}-rows-hint`} class="hint">
          The whole table, replaced at once; the next question reads it. Fields: {COLUMNS.map((c) => c.key).join(", ")}.
          At most 500 rows; amounts are numbers or text quoted verbatim.
          {format === "csv" ? " In CSV, row 0 is the line under the header and an empty cell leaves the field out." : ""}
        </p>
      </div>
      <div class="buttons">
        <button type="submit" disabled={busy}>
          {busy ? "Saving…" : "Replace table"}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Live({ creds, canWrite, announce, onApiError }: Props) {
  const [sources, setSources] = useState<LiveSource[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => heading.current?.focus(), []);

  const read = useCallback(async () => setSources(await api.live(creds)), [creds]);
  const load = useRead(read, setError, onApiError);
  // paused while a table is being edited: a reload must not pull rows from under the editor
  const poke = usePolling(load, editing ? 3_600_000 : 15000);

  /** A table saved: the editor closes, the result is announced and the tables read again. */
  function edited(note: string) {
    setEditing(null);
    announce(note);
    poke();
  }

  const write = canWrite !== false;

  return (
    <main id="main">
      <h1 tabIndex={-1} ref={heading}>
        Live data
      </h1>
      <p>
        Tables an operator keeps current (fees, limits, processing times). They are read when a question on those
        topics is asked, never indexed, and quoted exactly as written here.
      </p>
      {error && (
        <p class="error" role="alert">
          The live data could not be loaded: {error}
        </p>
      )}
      {!sources && !error && <p aria-busy="true">Loading live data…</p>}
      {sources && sources.length === 0 && (
        <p class="notice">
          This bot has no live source. Create one of type “live” with the API (<code>POST sources</code>), then fill its
          tables here.
        </p>
      )}
      {sources?.map((s) => {
        const missing = s.requiredTables.filter((t) => !s.tables.some((x) => x.table === t));
        return (
          <section class="card live-source" aria-labelledby={`live-${s.sourceId}`}>
            <h2 id={`live-${s.sourceId}`}>
              {s.name} <span class="sub">{s.visibility} · {s.status}</span>
            </h2>
            {missing.length > 0 && (
              <p class="error">
                Missing table{missing.length === 1 ? "" : "s"}: {missing.join(", ")}. Until{" "}
                {missing.length === 1 ? "it is" : "they are"} filled, this source gives no live passage at all.
              </p>
            )}
            {s.tables.length === 0 && <p>No table stored yet.</p>}
            {s.tables.map((t) => {
              const key = `${s.sourceId}/${t.table}`;
              const enabled = t.rows.filter((r) => r.enabled !== false).length;
              return (
                <div class="live-table">
                  <div class="table-wrap">
                    <table class="data">
                      <caption>
                        Table “{t.table}”: {t.rows.length} row{t.rows.length === 1 ? "" : "s"}, {enabled} enabled
                      </caption>
                      <thead>
                        <tr>
                          {COLUMNS.map((c) => (
                            <th scope="col">{c.label}</th>
                          ))}
                        </tr>
                      </thead>
                      <tbody>
                        {t.rows.map((r) => (
                          <tr class={r.enabled === false ? "off" : undefined}>
                            {COLUMNS.map((c) => (
                              <td>{cell(r[c.key])}</td>
                            ))}
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                  {write &&
                    (editing === key ? (
                      <TableEditor
                        creds={creds}
                        source={s}
                        table={t.table}
                        rows={t.rows}
                        onApiError={onApiError}
                        onCancel={() => setEditing(null)}
                        onDone={edited}
                      />
                    ) : (
                      <button type="button" class="secondary" onClick={() => setEditing(key)}>
                        Edit rows<span class="sr-only"> of table {t.table}</span>
                      </button>
                    ))}
                </div>
              );
            })}
            {write &&
              (editing === `${s.sourceId}/` ? (
                <TableEditor
                  creds={creds}
                  source={s}
                  table={null}
                  rows={[]}
                  onApiError={onApiError}
                  onCancel={() => setEditing(null)}
                  onDone={edited}
                />
              ) : (
                <button type="button" onClick={() => setEditing(`${s.sourceId}/`)}>
                  Add a table<span class="sr-only"> to {s.name}</span>
                </button>
              ))}
          </section>
        );
      })}
    </main>
  );
}
