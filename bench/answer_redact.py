"""Recall and over-redaction of ticket redaction on a labelled corpus.

    python bench/answer_redact.py [--split tune|heldout|all] [--path FILE] [--show] [--packs DIR]
    python bench/answer_redact.py --every   # every ticket file under bench/answer/, one line each

``bench/answer/tickets.txt`` holds tickets (a ``# title`` line, then ``C:``/``A:`` turns; a
line with neither prefix continues the turn above, as a signature does) with every personal
datum marked ``[[kind|value]]``. Each ticket goes through the product's path
(``knowledge.answer.tickets.redact_ticket``: title and turns together, so a name found in one
turn is removed from all; each turn with its speaker, "C:" the customer and "A:" the agent, the
title with none). Tickets alternate between the tuning half
(0, 2, 4...) and the held-out half (1, 3, 5...); the detectors were tuned on the first only.

Recall: the share of labelled data whose every character was redacted. Kept: the share of
the other words (``\\w+`` outside any label) that no redaction touched. Precision: the share
of redacted spans that overlap a labelled datum.

The route asks the bot's index which capitalised words of a ticket (and the parts of a code
like "WD-4001") its corpus knows; here the corpus is the example packs (``examples/packs``:
every word and number of every page, stemmed as the index stems them). The figures are
printed with that vocabulary and, as the reference, without any (the rule that needs it off)."""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from knowledge.analysis import stem
from knowledge.answer import name_lexicon
from knowledge.answer.tickets import Vocabulary, redact_ticket

HERE = Path(__file__).parent
_MARK = re.compile(r"\[\[([a-z_]+)\|(.+?)\]\]")


def _unmark(body: str) -> tuple[str, list[tuple[int, int, str]]]:
    text, spans, last, pos = [], [], 0, 0
    for m in _MARK.finditer(body):
        text.append(body[last : m.start()])
        pos += m.start() - last
        spans.append((pos, pos + len(m.group(2)), m.group(1)))
        text.append(m.group(2))
        pos += len(m.group(2))
        last = m.end()
    text.append(body[last:])
    return "".join(text), spans


#: one turn of a ticket: its text, its labelled spans and who wrote it (None for the title)
Turn = tuple[str, list[tuple[int, int, str]], str | None]
_SPEAKERS = {"C: ": "customer", "A: ": "agent"}


def parse(path: Path) -> list[list[Turn]]:
    """Tickets as lists of (text, labelled spans, speaker) per turn (the title is a turn too,
    with no speaker)."""
    tickets: list[list[Turn]] = []
    raw: list[list[tuple[str, str | None]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#!") or not line.strip():
            continue
        if line.startswith("# "):
            raw.append([(line[2:], None)])
        elif line[:3] in _SPEAKERS and raw:
            raw[-1].append((line[3:], _SPEAKERS[line[:3]]))
        elif raw and len(raw[-1]) > 1:
            body, speaker = raw[-1][-1]
            raw[-1][-1] = (body + "\n" + line, speaker)
    for bodies in raw:
        tickets.append([(*_unmark(body), speaker) for body, speaker in bodies])
    return tickets


def pack_vocabulary(root: Path) -> Vocabulary:
    """The words a bot built from the packs under ``root`` knows, asked the way the route asks
    its index: by stem."""
    stems = {stem(w) for page in sorted(root.rglob("*.md"))
             for w in re.findall(r"[^\W_]+", page.read_text(encoding="utf-8").lower())}
    return lambda words: {w for w in words if stem(w) in stems}


def measure(chosen: list[list[Turn]], vocabulary: Vocabulary | None,
            label: str, show: bool, quiet: bool = False) -> tuple[int, int, int, int]:
    """Prints the figures (unless ``quiet``); returns (data found, labelled, words kept, words)."""
    labels = found = words = kept = spans_made = spans_right = 0
    per_kind: Counter[str] = Counter()
    per_kind_found: Counter[str] = Counter()
    misses, over = [], []
    started = time.perf_counter()
    redact_ticket(["Hello Kevin"], vocabulary=vocabulary)  # loads the word lists once
    name_lexicon.place_names(), name_lexicon.seed_words()
    first = time.perf_counter() - started
    started = time.perf_counter()
    redacted = [redact_ticket([t for t, _, _ in ticket], vocabulary=vocabulary, speakers=[w for _, _, w in ticket])
                for ticket in chosen]
    per_ticket = (time.perf_counter() - started) / max(len(chosen), 1)
    for ticket, results in zip(chosen, redacted, strict=True):
        for (text, spans, _), result in zip(ticket, results, strict=True):
            covered = [False] * len(text)
            for s in result.spans:
                for i in range(s.start, s.end):
                    covered[i] = True
                spans_made += 1
                spans_right += any(s.start < e and s.end > b for b, e, _ in spans)
            for start, end, kind in spans:
                labels += 1
                per_kind[kind] += 1
                if all(covered[start:end]):
                    found += 1
                    per_kind_found[kind] += 1
                else:
                    misses.append((kind, text[start:end]))
            for m in re.finditer(r"\w+", text):
                if any(m.start() < e and m.end() > s for s, e, _ in spans):
                    continue
                words += 1
                if any(covered[m.start() : m.end()]):
                    over.append(m.group())
                else:
                    kept += 1
    if quiet:
        return found, labels, kept, words
    print(f"{label}: {labels} labelled data, {words} other words")
    print(f"recall {found / labels:.4f} ({found}/{labels}); other words kept {kept / words:.4f} ({kept}/{words}); "
          f"precision {spans_right / max(spans_made, 1):.4f} ({spans_right}/{spans_made} redactions on a label)")
    print(f"time: {1000 * per_ticket:.1f} ms a ticket; first call {1000 * first:.0f} ms")
    for kind in sorted(per_kind):
        print(f"  {kind:<16} {per_kind_found[kind]}/{per_kind[kind]}")
    if show:
        for kind, value in misses:
            print(f"  missed {kind}: {value!r}")
        print(f"  over-redacted words: {over}")
    return found, labels, kept, words



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="heldout")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--path", default=str(HERE / "answer" / "tickets.txt"))
    parser.add_argument("--packs", default=str(HERE.parent / "examples" / "packs"))
    parser.add_argument("--every", action="store_true",
                        help="one line per ticket file under bench/answer/ (all its tickets), and the total")
    args = parser.parse_args()
    if args.every:
        every(pack_vocabulary(Path(args.packs)))
        return
    tickets = parse(Path(args.path))
    chosen = [t for i, t in enumerate(tickets)
              if args.split == "all" or (i % 2 == 0) == (args.split == "tune")]
    print(f"split {args.split}: {len(chosen)} tickets")
    measure(chosen, pack_vocabulary(Path(args.packs)), f"with the vocabulary of {args.packs}", args.show)
    measure(chosen, None, "reference, no vocabulary", False)


def every(vocabulary: Vocabulary) -> None:
    totals = [0] * 8
    for path in sorted((HERE / "answer").glob("tickets*.txt")):
        tickets = parse(path)
        figures = (*measure(tickets, vocabulary, "", False, quiet=True), *measure(tickets, None, "", False, quiet=True))
        totals = [a + b for a, b in zip(totals, figures, strict=True)]
        _line(path.name, figures)
    _line("all", totals)


def _line(name: str, f: Sequence[int]) -> None:
    print(f"{name:<26} recall {f[0] / f[1]:.4f} ({f[0]}/{f[1]}) kept {f[2] / f[3]:.4f}; "
          f"reference, no vocabulary: recall {f[4] / f[5]:.4f} kept {f[6] / f[7]:.4f}")


if __name__ == "__main__":
    main()
