"""Benchmark report pages, generated from the committed experiment reports under benchmarks/results/.

mkdocs runs this file as a hook (mkdocs.yml `hooks:`): every `benchmarks/results/<name>/summary.md` becomes the
page `benchmarks/reports/<name>.md` with its figures, and `<!-- benchmark-reports -->` on a page becomes the list of
them, so the site shows exactly the reports that are committed; `<!-- benchmarks-md -->` becomes BENCHMARKS.md (today's
claims and their commands) with its links pointing at those pages.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
MARKER = "<!-- benchmark-reports -->"
CLAIMS = "<!-- benchmarks-md -->"  # BENCHMARKS.md, today's claims with their commands
FIGURES = {"learning_curves.png": "Learning curves (IQM over seeds, 95% CI band)",
           "final_scores.png": "Final scores (interval estimates)",
           "performance_profile.png": "Performance profile"}


def reports() -> list[Path]:
    """The committed report directories, by name."""
    return sorted(p.parent for p in RESULTS.glob("*/summary.md"))


def tasks_and_algos(summary: str) -> tuple[list[str], list[str]]:
    """The tasks (env_task) and algorithms of a report's first table."""
    tasks, algos = [], []
    for line in summary.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 3 and line.startswith("| ") and cells[0] not in ("env", "---"):
            if re.fullmatch(r"[-:]+", cells[0]):
                continue
            task, algo = f"{cells[0]}_{cells[1]}", cells[2]
            tasks += [task] * (task not in tasks)
            algos += [algo] * (algo not in algos)
        elif tasks and not line.startswith("|") and line.strip():
            break
    return tasks, algos


def page(report: Path) -> str:
    """The Markdown of one report's page: what it holds, its figures, then the report as the runner wrote it."""
    summary = (report / "summary.md").read_text()
    tasks, algos = tasks_and_algos(summary)
    body = re.sub(r"\A# Experiment report\s*", "", summary)
    parts = [f"# {report.name}", "",
             f"Report of `scripts/experiment.py`, committed as `benchmarks/results/{report.name}/`: "
             f"{', '.join(algos)} on {', '.join(tasks)}. Its raw data (results.json, summary.csv) sit beside it.", ""]
    for png, caption in FIGURES.items():
        if (report / png).exists():
            parts += [f"![{caption}]({report.name}/{png})", "", f"*{caption}.*", ""]
    return "\n".join([*parts, body])


def index() -> str:
    """A table linking every committed report."""
    rows = ["| report | algorithms | tasks |", "| --- | --- | --- |"]
    for report in reports():
        tasks, algos = tasks_and_algos((report / "summary.md").read_text())
        rows.append(f"| [{report.name}](reports/{report.name}.md) | {', '.join(algos)} | {', '.join(tasks)} |")
    return "\n".join(rows)


def report_links(markdown: str) -> str:
    """Links into benchmarks/results/<name>/ (as BENCHMARKS.md writes them) -> the report pages beside the index."""
    markdown = re.sub(r"\[benchmarks/results/(\w+)/\]\(benchmarks/results/\w+/summary\.md\)", r"[\1](reports/\1.md)",
                      markdown)
    markdown = re.sub(r"\]\(benchmarks/results/(\w+)/(\w+\.png)\)", r"](reports/\1/\2)", markdown)
    return re.sub(r"\]\(benchmarks/results/(\w+)/[^)]*\)", r"](reports/\1.md)", markdown)


def claims() -> str:
    """BENCHMARKS.md without its title, its headings one level down, linked to the report pages."""
    text = re.sub(r"\A# .*\n", "", (ROOT / "BENCHMARKS.md").read_text())
    out, fenced = [], False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        out.append("#" + line if line.startswith("#") and not fenced else line)
    return report_links("\n".join(out))


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    """mkdocs hook: add every report page and its figures to the site."""
    for report in reports():
        files.append(File.generated(config, f"benchmarks/reports/{report.name}.md", content=page(report)))
        for png in sorted(report.glob("*.png")):
            files.append(File.generated(config, f"benchmarks/reports/{report.name}/{png.name}",
                                        abs_src_path=str(png)))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: expand the report index marker."""
    if CLAIMS in markdown:
        markdown = markdown.replace(CLAIMS, claims())
    return markdown.replace(MARKER, index())
