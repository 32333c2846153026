"""Build data/papers.jsonl, the bundled seed corpus, from the shared seed list.

    python3 data/build_seed_corpus.py            # write data/papers.jsonl
    python3 data/build_seed_corpus.py --check    # exit 1 if data/papers.jsonl is out of date

Inputs (read-only, in the shared folder next to the repository, `../shared` by default):
- seeds/*.txt: a header line, then one abstract per paragraph (paragraph i is seed_index i);
- data/seed_titles.json: id, title and authors for each seed_index;
- data/icml2025/papers.jsonl: pmlr_url and status, looked up by id (nothing else is taken).

Output: one JSON object per line, in seed order, with the fields
id, title, abstract, authors, url, pmlr_url, status, venue. The abstract is the seed text as is.
Only the standard library is used, so it runs with any python3 >= 3.10.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SHARED = REPO.parent / "shared"
DEFAULT_OUT = REPO / "data" / "papers.jsonl"
FIELDS = ("id", "title", "abstract", "authors", "url", "pmlr_url", "status", "venue")
VENUE = "ICML 2025"  # every seed paper is an ICML 2025 paper


def seed_abstracts(seeds_dir: Path) -> list[str]:
    """The abstracts of seeds/*.txt (files in name order), without each file's header line."""
    files = sorted(seeds_dir.glob("*.txt"))
    if not files:
        raise SystemExit(f"no seed files in {seeds_dir}")
    abstracts: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
        paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
        header, *rest = paragraphs
        if "\n" in header or len(header.split()) >= 20:
            raise SystemExit(f"{path}: expected a one-line header, got {header[:60]!r}")
        abstracts.extend(" ".join(p.split()) for p in rest)
    return abstracts


def build(shared: Path) -> list[dict[str, object]]:
    abstracts = seed_abstracts(shared / "seeds")
    titles = json.loads((shared / "data" / "seed_titles.json").read_text(encoding="utf-8"))
    titles = sorted(titles, key=lambda entry: entry["seed_index"])
    if [entry["seed_index"] for entry in titles] != list(range(len(abstracts))):
        raise SystemExit(
            f"seed_titles.json does not cover seed_index 0..{len(abstracts) - 1} exactly once"
        )
    wanted = {entry["id"] for entry in titles}
    listed: dict[str, dict[str, object]] = {}
    with (shared / "data" / "icml2025" / "papers.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["id"] in wanted:
                listed[record["id"]] = record
    missing = sorted(wanted - listed.keys())
    if missing:
        raise SystemExit(f"ids not in icml2025/papers.jsonl: {', '.join(missing)}")

    papers = []
    for entry, abstract in zip(titles, abstracts, strict=True):
        paper_id = entry["id"]
        record = listed[paper_id]
        check_same_paper(entry, abstract, str(record["abstract"]))
        papers.append(
            {
                "id": paper_id,
                "title": entry["title"],
                "abstract": abstract,
                "authors": list(entry["authors"]),
                "url": f"https://openreview.net/forum?id={paper_id}",
                "pmlr_url": record["pmlr_url"],
                "status": record["status"],
                "venue": VENUE,
            }
        )
    return papers


def check_same_paper(entry: dict[str, object], seed: str, listed: str) -> None:
    """Guard against an off-by-one between the seed paragraphs and seed_titles.json: the listed
    abstract is the seed text without its final period ("exact"), differs in one character
    ("near"), or is the seed text itself ("added")."""
    ok = {
        "exact": seed.rstrip(".") == listed,
        "added": seed == listed,
        "near": len(seed.rstrip(".")) == len(listed)
        and sum(a != b for a, b in zip(seed.rstrip("."), listed, strict=True)) == 1,
    }.get(str(entry.get("match")), False)
    if not ok:
        raise SystemExit(
            f"seed_index {entry['seed_index']} ({entry['id']}): the seed abstract does not "
            f"match the listed one (match={entry.get('match')!r})"
        )


def render(papers: list[dict[str, object]]) -> str:
    return "".join(
        json.dumps({key: paper[key] for key in FIELDS}, ensure_ascii=False) + "\n"
        for paper in papers
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output JSONL file")
    parser.add_argument("--check", action="store_true", help="only check --out is up to date")
    args = parser.parse_args(argv)
    text = render(build(args.shared))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date: run python3 data/build_seed_corpus.py")
            return 1
        print(f"{args.out} is up to date ({text.count(chr(10))} papers)")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} papers to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
