"""The configuration reference, generated from the typed config dataclasses and their field comments.

mkdocs runs this file as a hook (mkdocs.yml `hooks:`): a page line `<!-- config: CLASS -->` becomes the table of
that class's keys (`<!-- config: module.CLASS -->`: an env's options, as `env.KEY`), and `<!-- config: all -->` the
reference of every class, so the docs cannot drift from the code.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def document_this_checkout() -> None:
    """Import the packages from the checkout holding this file, not from an installed copy (an editable install
    of another worktree would otherwise be documented)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


document_this_checkout()

MARKER = re.compile(r"^<!-- config: ([\w.]+) -->$", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Field:
    """One config key as the reference shows it."""

    name: str
    type: str
    default: str
    doc: str


def config_classes() -> dict[str, tuple[type, str, list[str]]]:
    """Section title -> (config class, config section, the --algo names that use it), in reference order."""
    import marl.algos
    import single_agent.algos
    from core.run_config import TrainConfig

    out: dict[str, tuple[type, str, list[str]]] = {"train": (TrainConfig, "train", [])}
    for registry in (marl.algos.ALGOS, single_agent.algos.ALGOS):
        for algo, entry in registry.items():
            cls = entry.config_class
            out.setdefault(cls.__name__, (cls, "algo", []))[2].append(algo)
    return out


def _comments(source: str) -> dict[int, str]:
    """Line number -> the text of the comment on that line."""
    found: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string.lstrip("#").strip()
    return found


def _class_fields(cls: type) -> dict[str, tuple[str, str]]:
    """Field name -> (annotation as written, comment) for the fields that `cls` itself declares.

    The comment is the field's trailing `# ...` and any comment lines right above it, in that order of reading.
    """
    source = inspect.getsource(cls)
    lines = source.splitlines()
    comments = _comments(source)
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    out: dict[str, tuple[str, str]] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        above: list[str] = []
        line = stmt.lineno - 1
        while line >= 1 and line in comments and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, comments[line])
            line -= 1
        trailing = [comments[stmt.end_lineno]] if stmt.end_lineno in comments else []
        out[stmt.target.id] = (ast.unparse(stmt.annotation), " ".join(above + trailing))
    return out


def _default(field: dataclasses.Field[Any]) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "required"
    if isinstance(value, tuple):
        value = list(value)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else repr(value)


def yaml_comments(algos: list[str]) -> dict[str, str]:
    """Key -> its comment in the `algo:` section of configs/algos/<algo>.yaml, for the algorithms given."""
    found: dict[str, str] = {}
    for algo in algos:
        path = ROOT / "configs" / "algos" / f"{algo}.yaml"
        section = None
        for line in path.read_text().splitlines():
            if re.match(r"^\w+:", line):
                section = line.split(":")[0]
            match = re.match(r"^  (\w+):.*?#\s*(.+)$", line)
            if section == "algo" and match:
                found.setdefault(match.group(1), match.group(2).strip())
    return found


def yaml_train(algo: str) -> dict[str, Any]:
    """The `train:` values that configs/algos/<algo>.yaml sets for an algorithm."""
    from core.config import load_yaml

    return dict(load_yaml(ROOT / "configs" / "algos" / f"{algo}.yaml").get("train") or {})


def fields(cls: type, algos: list[str] | None = None) -> list[Field]:
    """Every field of a config dataclass (inherited ones too), with its type, default and comment.

    A field without a comment in the dataclass takes its comment in the algorithms' configs/algos/*.yaml.
    """
    declared: dict[str, tuple[str, str]] = {}
    for base in reversed(cls.__mro__):
        if dataclasses.is_dataclass(base):
            declared.update(_class_fields(base))
    shown = yaml_comments(algos or [])
    return [Field(f.name, declared[f.name][0], _default(f), declared[f.name][1] or shown.get(f.name, ""))
            for f in dataclasses.fields(cls)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(cls: type, section: str, algos: list[str] | None = None) -> str:
    """A Markdown table of the keys of one config class, as `section.key`."""
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    rows += [f"| `{section}.{f.name}` | `{_cell(f.type)}` | `{_cell(f.default)}` | {_cell(f.doc)} |"
             for f in fields(cls, algos)]
    return "\n".join(rows)


def variant_note(algos: list[str]) -> str:
    """Which --algo names use a class, and the values each of them fixes."""
    import marl.algos
    import single_agent.algos

    registry: dict[str, Any] = {**marl.algos.ALGOS, **single_agent.algos.ALGOS}
    parts = []
    for algo in algos:
        fixed = ", ".join(f"`{k}={v}`" for k, v in registry[algo].defaults.items())
        train = ", ".join(f"`train.{k}={v}`" for k, v in yaml_train(algo).items())
        notes = [f"fixes {fixed}"] * bool(fixed) + [f"its defaults set {train}"] * bool(train)
        parts.append(f"`--algo {algo}`" + (f" ({'; '.join(notes)})" if notes else ""))
    return "Used by " + ", ".join(parts) + "."


def description(cls: type) -> str:
    """The first paragraph of `cls`'s docstring on one line; empty where it has none, as `dataclass` then writes
    the class's signature there (`DQNConfig(buffer_size: 'PositiveInt' = 100000, ...)`), which is no description."""
    doc = inspect.getdoc(cls) or ""
    return "" if doc.startswith(f"{cls.__name__}(") else " ".join(doc.split("\n\n")[0].split())


def reference() -> str:
    """The whole reference: `train:` first, then every algorithm's config class."""
    blocks = []
    for title, (cls, section, algos) in config_classes().items():
        where = f"`{cls.__module__}.{cls.__qualname__}`"
        head = f"## `{title}:`" if section == "train" else f"## {title}"
        intro = [where + (f": {summary}" if (summary := description(cls)) else "")]
        if algos:
            intro.append(variant_note(algos))
        blocks.append("\n\n".join([head, " ".join(intro), table(cls, section, algos)]))
    return "\n\n".join(blocks)


def expand(markdown: str) -> str:
    """Replace every config marker in a page by its generated text."""
    classes = config_classes()

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "all":
            return reference()
        if "." in name:  # an env's options class, named with its module: keys of the `env` section
            module, _, qualname = name.rpartition(".")
            return table(getattr(importlib.import_module(module), qualname), "env")
        if name not in classes:
            raise ValueError(f"config marker names unknown class {name!r}; known: {', '.join(classes)}")
        return table(*classes[name])

    return MARKER.sub(one, markdown)


def sections() -> Iterator[str]:
    """Every config key the reference documents, as `section.key` (what the tests check)."""
    for cls, section, algos in config_classes().values():
        for f in fields(cls, algos):
            yield f"{section}.{f.name}"


def on_config(config: Any, **kwargs: Any) -> Any:
    """mkdocs hook: mkdocs takes back a hook's changes to sys.path once the hook is loaded, so make them again."""
    document_this_checkout()
    return config


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """mkdocs hook: expand the config markers of every page."""
    return expand(markdown)
