// Words for what the API says in codes: a source's error code, an excerpt's reason, and
// why a retrieval would or would not be answered.

import type { Retrieval } from "./api";

export type Explanation = { what: string; todo: string };

const SOURCE_ERRORS: Record<string, Explanation> = {
  blocked_address: {
    what: "The address points to a private, local or otherwise forbidden network, which kb never fetches.",
    todo: "Use a public address for the site or file.",
  },
  robots_denied: {
    what: "The site's robots.txt does not allow kb to fetch these pages.",
    todo: "Allow kb's crawler in robots.txt, or choose start pages it may fetch.",
  },
  unsupported_type: {
    what: "The file's format cannot be read.",
    todo: "Upload PDF, Word, Excel, PowerPoint, HTML, Markdown or plain text.",
  },
  file_too_large: {
    what: "The file is larger than the 8 MB limit.",
    todo: "Split the file or remove large images, then upload it again.",
  },
  expanded_too_large: {
    what: "The file unpacks to far more text than its size suggests, so reading it was stopped.",
    todo: "Export it again without embedded content, or split it into smaller files.",
  },
  malformed_file: {
    what: "The file is damaged or is not what its type says.",
    todo: "Open it in its own program, save it again, and upload the new copy.",
  },
  fetch_timeout: {
    what: "The site did not answer in time.",
    todo: "Check that the site is up, then refresh the source.",
  },
  rate_limited: {
    what: "The site or the embedding service asked kb to slow down; kb retries by itself.",
    todo: "Wait for the next attempt; refresh the source if it stays failed.",
  },
  embedding_failed: {
    what: "The embedding service could not turn the text into vectors.",
    todo: "Check the bot's embedding settings, then refresh the source.",
  },
  out_of_scope: {
    what: "This pack documents a product the bot does not run, so it is kept out of every search.",
    todo: "Add the product to the bot's products if it should answer, or delete the pack.",
  },
  cancelled: {
    what: "The last run was cancelled; the content indexed before it still answers.",
    todo: "Refresh the source to index it again.",
  },
  internal_error: {
    what: "kb failed unexpectedly while indexing this source.",
    todo: "Refresh it; if it fails again, the server log tells why.",
  },
};

export function explainSourceError(code: string, message: string | null): Explanation {
  return (
    SOURCE_ERRORS[code] ?? {
      what: message && message !== code ? message : `The source failed with the code ${code}.`,
      todo: "Refresh the source; if it fails again, the server log tells why.",
    }
  );
}

export const REASONS: Record<string, string> = {
  hybrid: "found by both keyword and meaning search",
  lexical: "found by keyword search",
  semantic: "found by meaning search",
  rescue: "added by the corpus-learned rescue",
  live: "live operator data",
};

export const AUDIENCES: { value: string; label: string; hint: string }[] = [
  { value: "customer", label: "Customer", hint: "an agent answering a customer: public and agent-only passages" },
  { value: "public", label: "Public", hint: "help-center surfaces: public passages only" },
  { value: "operator", label: "Operator", hint: "operator-only passages" },
];

export type Verdict = { shape: "nothing" | "below" | "gated" | "answered" | "refused"; sentence: string };

function num(x: number): string {
  return x.toFixed(2);
}

/** One sentence saying whether the agent would answer, and why (the four result shapes). */
export function verdict(r: Retrieval): Verdict {
  const n = r.excerpts.length;
  if (n === 0) {
    const other =
      r.audience === "operator"
        ? ""
        : " Passages written for operators are not searched for this audience; ask as operator to check them.";
    return {
      shape: "nothing",
      sentence: `Nothing found: no passage visible to the ${r.audience} audience matches this question, so the agent would not answer.${other}`,
    };
  }
  if (r.gate && !r.gate.passed) {
    const topic = r.gate.topic ?? r.topic;
    return {
      shape: "gated",
      // the server's reason already names the topic and what was missing: it is the sentence
      sentence: r.gate.reason
        ? `Gated: ${r.gate.reason}, so the agent would not answer.`
        : `Gated: the question is about ${topic ? topic.replace(/_/g, " ") : "a gated topic"} and no ` +
          `operator-written excerpt backs it, so the agent would not answer.`,
    };
  }
  if (r.confidence < r.floor) {
    return {
      shape: "below",
      sentence: `Below the floor: ${n} excerpt${n === 1 ? "" : "s"} found, but the confidence ${num(
        r.confidence,
      )} is under the floor ${num(r.floor)}, so the agent would not answer from them.`,
    };
  }
  if (r.wouldAnswer) {
    return {
      shape: "answered",
      sentence: `Answered: ${n} excerpt${n === 1 ? "" : "s"} with confidence ${num(r.confidence)}, at or above the floor ${num(
        r.floor,
      )}${r.operatorGrounded ? ", grounded in text an operator wrote" : ""}.`,
    };
  }
  return { shape: "refused", sentence: "Not answered: the service decided against answering this question." };
}
