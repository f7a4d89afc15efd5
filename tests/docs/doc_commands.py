"""The `python -m MODULE ...` commands quoted in markdown files, with the flags they pass.

Commands are read from fenced code blocks, indented code blocks and inline code spans (which
may wrap across lines). A command is any `python`/`python3`/`.venv/bin/python` or `torchrun`
invocation with `-m MODULE` for a module of this repository (`rearrange...`,
`benchmarks...`), with environment assignments (`MUJOCO_GL=egl`) and launcher options
(`torchrun --nproc-per-node 2`) before it; a `python benchmarks/NAME.py` script counts as
the module `benchmarks.NAME`. Its flags are the `--name` tokens after the module, up to a
shell comment, `&&`, `|`, `;` or a redirection; Hydra overrides (`ver.num_envs=8`,
`+algo=pql`) are not flags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PROJECT_MODULES = ("rearrange", "benchmarks")

_FENCE = re.compile(r"^ {0,3}(```+|~~~+)[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.M | re.S)
_INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_LAUNCH = re.compile(
    r"(?<![^\s/])(?:python3?|torchrun)\b(?P<opts>[^\n]*?)\s-m\s+(?P<module>[A-Za-z_][\w.]*)"
    r"(?P<args>[^\n]*)"
)
_SCRIPT = re.compile(
    r"(?<![^\s/])python3?\s+(?P<path>(?:\./)?benchmarks/\w+)\.py\b(?P<args>[^\n]*)"
)
_END = re.compile(r"\s#|&&|\|\||[|;>]|\$\(")
_FLAG = re.compile(r"^--[A-Za-z][\w-]*")


@dataclass(frozen=True)
class DocCommand:
    source: str  # "README.md:12"
    module: str  # e.g. "rearrange.eval"
    script: str  # "benchmarks/NAME.py" when quoted as a script, else ""
    flags: tuple[str, ...]  # e.g. ("--episodes", "--videos")
    text: str  # the command as quoted (whitespace normalised)

    @property
    def argv(self) -> tuple[str, ...]:
        """How to run it with a python interpreter, as it is quoted."""
        return (self.script,) if self.script else ("-m", self.module)


def code_texts(markdown: str) -> list[tuple[int, str, bool]]:
    """(line number, text, is a block) of every fenced block, indented block line and inline
    code span."""
    out = []
    for m in _FENCE.finditer(markdown):
        out.append((markdown.count("\n", 0, m.start(2)) + 1, m.group(2), True))
    rest = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), markdown)  # keep line numbers
    lines = rest.split("\n")
    indented = set()
    for k, line in enumerate(lines):
        follows = k > 0 and (not lines[k - 1].strip() or k - 1 in indented)
        if line.startswith("    ") and line.strip() and "`" not in line and follows:
            indented.add(k)
            out.append((k + 1, line, True))
    spans = "\n".join("" if k in indented else line for k, line in enumerate(lines))
    for m in _INLINE.finditer(spans):
        out.append((spans.count("\n", 0, m.start()) + 1, m.group(1), False))
    return out


def _command(source: str, module: str, script: str, args: str, text: str) -> DocCommand:
    args = _END.split(args, maxsplit=1)[0]
    flags = []
    for token in args.split():
        m = _FLAG.match(token.strip("\"'[]()"))
        if m and m.group(0) not in flags:
            flags.append(m.group(0))
    return DocCommand(source, module, script, tuple(flags), " ".join(text.split()))


def commands_in(path: Path, label: str | None = None) -> list[DocCommand]:
    """Every project-module command quoted in the markdown file `path`."""
    label = label or path.name
    out = []
    for line_no, text, block in code_texts(path.read_text()):
        # in a block every line is a command of its own (`\\` continues one); a span wraps
        pieces = text.replace("\\\n", " ").split("\n") if block else [" ".join(text.split())]
        for offset, piece in enumerate(pieces):
            where = f"{label}:{line_no + offset}"
            for m in _LAUNCH.finditer(piece):
                module = m.group("module")
                if module.split(".")[0] in PROJECT_MODULES:
                    out.append(_command(where, module, "", m.group("args"), m.group(0)))
            for m in _SCRIPT.finditer(piece):
                script = m.group("path").removeprefix("./") + ".py"
                module = script.removesuffix(".py").replace("/", ".")
                out.append(_command(where, module, script, m.group("args"), m.group(0)))
    return out
