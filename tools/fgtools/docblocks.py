"""Runs the documentation's runnable command blocks, so the docs cannot drift from the CLI.

A fenced block whose opening line is exactly ```` ```sh runnable ```` is runnable (GitHub shows it as
sh); every other block is illustration. Each runnable block runs on its own:

- in a fresh folder TMP/work, with TMP/shared a link to the checkout's ../shared (when there is
  one), so a block's `../shared/...` paths resolve as they do in the checkout;
- beside links to the checkout's folders `pipelines`, `models`, `samples`, `tools` and `Tests`, and
  the docs' conventional inputs:
      clip.mp4, talk.mp4   links to samples/media/portrait.mp4 (10 s, 640x480, 30 fps)
      clip.mkv             the same clip remuxed into Matroska (ffmpeg -c copy, once per run)
      photo.jpg            its first frame as a JPEG (ffmpeg, once per run)
- with `framegraph` on PATH first: $FRAMEGRAPH_BIN when set, else the checkout's
  .build/release/framegraph;
- under `bash -euo pipefail`, DISPLAY and WAYLAND_DISPLAY unset, the other FRAMEGRAPH_* variables
  unset, XDG_CONFIG_HOME and XDG_CACHE_HOME inside the folder (a block never sees or changes this
  user's machine config or model cache), and a time limit: 120 s, or `# timeout: N` in the block.

A block may say `# needs: shared` (../shared's models and media) or `# needs: camera` (a V4L2
camera), optionally followed by a note in words; it is skipped, with the reason, when ../shared is absent, and always for a camera (the
runner has none). Nothing else may be needed: runnable blocks never reach the network.

Each block is reported as FILE:LINE (the line of its opening fence) PASS, FAIL or SKIP; a failure
shows the command that failed, its doc line and exit status, and the tail of its standard error.
The exit status is 1 when a block failed, 2 for a bad command line, else 0. Folders of failed
blocks are kept (their path is printed); --keep keeps them all.

    tools/run-doc-blocks.py [--list] [--keep] [--only FILE[:LINE]]… [FILE.md…]
    python3 -m fgtools.docblocks …      (the same, where fgtools is importable)

FILE.md… default to README.md and docs/*.md of the checkout. --only takes a file (as given, or a
path ending in it: CLI.md) and optionally a line inside the block. Standard library only: the tests
run it with whatever python3 is first on PATH.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPENING = "```sh runnable"
DEFAULT_TIMEOUT = 120.0
LINKED_FOLDERS = ("pipelines", "models", "samples", "tools", "Tests")
KNOWN_NEEDS = ("shared", "camera")
DIRECTIVE = re.compile(r"^\s*#\s*(timeout|needs):\s*(.*?)\s*$")
# Lines of the prelude put before each block; the ERR trap names the failing command and its line.
PRELUDE = [
    "trap 'rc=$?; printf \"\\ndocblocks: exit %s at block line %s: %s\\n\" \"$rc\" \"$((LINENO - 2))\" \"$BASH_COMMAND\" >&2' ERR",
    "set -E",
]


@dataclass
class Block:
    """One runnable block: where it is, its text and its directives."""
    path: Path
    line: int              # the opening fence's line (1-based)
    end: int               # the closing fence's line
    text: str
    timeout: float = DEFAULT_TIMEOUT
    needs: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{display(self.path)}:{self.line}"


def display(path: Path) -> str:
    """A path as reports show it: relative to the checkout when inside it."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def blocks_in(path: Path) -> list[Block]:
    """The runnable blocks of a Markdown file, in order. Raises ValueError for an unclosed block or a
    bad directive."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    fence_open: int | None = None
    runnable = False
    body: list[str] = []
    for number, line in enumerate(lines, 1):
        if fence_open is None:
            if line.startswith("```"):
                fence_open, runnable, body = number, line.rstrip() == OPENING, []
            continue
        if line.rstrip() == "```":
            if runnable:
                blocks.append(parse_block(path, fence_open, number, body))
            fence_open = None
        else:
            body.append(line)
    if fence_open is not None:
        raise ValueError(f"{display(path)}:{fence_open}: the block is never closed")
    return blocks


def parse_block(path: Path, line: int, end: int, body: list[str]) -> Block:
    block = Block(path=path, line=line, end=end, text="\n".join(body) + "\n")
    for offset, text in enumerate(body, 1):
        match = DIRECTIVE.match(text)
        if not match:
            continue
        key, value = match.groups()
        where = f"{display(path)}:{line + offset}"
        if key == "timeout":
            try:
                block.timeout = float(value)
            except ValueError:
                raise ValueError(f"{where}: '# timeout:' takes seconds, got '{value}'") from None
        else:
            words = re.match(r"[a-z][a-z, ]*", value)   # what follows, e.g. "(MetalTensor's models)", is a note
            for need in (words.group(0) if words else value).replace(",", " ").split():
                if need not in KNOWN_NEEDS:
                    raise ValueError(f"{where}: unknown need '{need}' (runnable blocks may need only "
                                     f"{' or '.join(KNOWN_NEEDS)}; a block that needs the network is not runnable)")
                block.needs.append(need)
    return block


class Inputs:
    """The per-run folder: the framegraph link and the conventional inputs made once."""

    def __init__(self, base: Path):
        self.base = base
        self.bin = base / "bin"
        self.bin.mkdir()
        binary = os.environ.get("FRAMEGRAPH_BIN") or str(ROOT / ".build/release/framegraph")
        (self.bin / "framegraph").symlink_to(Path(binary).resolve())
        self.binary = binary
        sample = ROOT / "samples/media/portrait.mp4"
        self.files: dict[str, Path] = {"clip.mp4": sample, "talk.mp4": sample}
        self.problems: list[str] = []
        made = base / "inputs"
        made.mkdir()
        for name, args in (("clip.mkv", ["-c", "copy"]), ("photo.jpg", ["-frames:v", "1", "-q:v", "2"])):
            target = made / name
            result = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(sample), *args, str(target)],
                                    capture_output=True, text=True) if shutil.which("ffmpeg") and sample.exists() else None
            if result is None or result.returncode != 0:
                why = "no ffmpeg or no samples/media/portrait.mp4 (tools/make-samples.sh)" if result is None else result.stderr.strip()
                self.problems.append(f"{name} not made: {why}")
            self.files[name] = target

    def prepare(self, work: Path) -> None:
        """Fills a block's folder with the links."""
        for name in LINKED_FOLDERS:
            (work / name).symlink_to(ROOT / name)
        for name, target in self.files.items():
            (work / name).symlink_to(target)


def environment(inputs: Inputs, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY") and not k.startswith("FRAMEGRAPH_")}
    env["PATH"] = f"{inputs.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["XDG_CONFIG_HOME"] = str(tmp / "xdg-config")
    env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
    return env


def tail(text: str, lines: int = 15) -> str:
    kept = [l for l in text.rstrip().split("\n") if l.strip()][-lines:]
    return "\n".join("    " + l for l in kept)


def run_block(block: Block, inputs: Inputs, keep: bool) -> tuple[str, str]:
    """Runs one block; returns (status, detail) with status PASS, FAIL or SKIP."""
    shared = ROOT.parent / "shared"
    if "camera" in block.needs:
        return "SKIP", "needs a camera"
    if "shared" in block.needs and not all((shared / part).is_dir() for part in ("models", "media")):
        return "SKIP", f"needs {shared}/models and {shared}/media (absent)"
    tmp = Path(tempfile.mkdtemp(prefix="fg-docblock-", dir=inputs.base))
    work = tmp / "work"
    work.mkdir()
    if shared.is_dir():
        (tmp / "shared").symlink_to(shared)
    inputs.prepare(work)
    script = tmp / "block.sh"
    script.write_text("\n".join(PRELUDE) + "\n" + block.text, encoding="utf-8")
    out_path, err_path = tmp / "stdout", tmp / "stderr"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        process = subprocess.Popen(["bash", "-euo", "pipefail", str(script)], cwd=work, env=environment(inputs, tmp),
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        timed_out = False
        try:
            status = process.wait(timeout=block.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            status = process.returncode
        kill_group(process.pid, signal.SIGKILL)   # whatever the block left running
        process.wait()
    seconds = time.monotonic() - start
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    if status == 0 and not timed_out:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
        return "PASS", f"{seconds:.1f} s"
    match = re.search(r"docblocks: exit (\d+) at block line (\d+): (.*)", stderr)
    if timed_out:
        what = f"timed out after {block.timeout:g} s (raise it with '# timeout: N' in the block)"
    elif match:
        doc_line = block.line + int(match.group(2))
        what = f"exit {match.group(1)} at {display(block.path)}:{doc_line}: {match.group(3)}"
        stderr = stderr[:match.start()]
    else:
        what = f"exit {status}"
    detail = f"{seconds:.1f} s, {what}\n"
    if stderr.strip():
        detail += tail(stderr)
    else:
        detail += "    (no standard error; standard output:)\n" + tail(stdout) if stdout.strip() else "    (no output)"
    detail += f"\n    (its folder: {work})"
    return "FAIL", detail


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def select(blocks: list[Block], only: list[str]) -> list[Block]:
    if not only:
        return blocks
    chosen = []
    for block in blocks:
        for spec in only:
            file, _, line = spec.partition(":")
            same = (Path(file).resolve() == block.path.resolve() or display(block.path).endswith(file)
                    or str(block.path).endswith(file))
            if same and (not line or block.line <= int(line) <= block.end):
                chosen.append(block)
                break
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run-doc-blocks.py",
                                     description="Run the docs' ```sh runnable blocks (see tools/fgtools/docblocks.py).")
    parser.add_argument("files", nargs="*", metavar="FILE.md", help="default: README.md and docs/*.md")
    parser.add_argument("--list", action="store_true", help="list the runnable blocks, run nothing")
    parser.add_argument("--only", action="append", default=[], metavar="FILE[:LINE]",
                        help="only the blocks of FILE, or the one containing LINE (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep every block's folder, not only failed ones")
    args = parser.parse_args(argv)
    for spec in args.only:
        if spec.partition(":")[2] and not spec.partition(":")[2].isdigit():
            parser.error(f"--only {spec}: LINE must be a number")
    files = [Path(f) for f in args.files] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks: list[Block] = []
    for f in files:
        try:
            blocks += blocks_in(f)
        except (OSError, ValueError) as error:
            print(f"run-doc-blocks: {error}", file=sys.stderr)
            return 2
    blocks = select(blocks, args.only)
    if args.only and not blocks:
        print(f"run-doc-blocks: no runnable block matches {', '.join(args.only)}", file=sys.stderr)
        return 2
    if args.list:
        for block in blocks:
            first = next((l for l in block.text.split("\n") if l.strip() and not l.lstrip().startswith("#")), "")
            extra = "".join(f"  [needs {n}]" for n in block.needs)
            extra += f"  [timeout {block.timeout:g} s]" if block.timeout != DEFAULT_TIMEOUT else ""
            print(f"{block.name}{extra}  {first.strip()[:100]}")
        counts: dict[str, int] = {}
        for block in blocks:
            counts[display(block.path)] = counts.get(display(block.path), 0) + 1
        print(f"{len(blocks)} runnable blocks: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        return 0
    binary = os.environ.get("FRAMEGRAPH_BIN") or str(ROOT / ".build/release/framegraph")
    if not os.access(binary, os.X_OK):
        print(f"run-doc-blocks: no framegraph at {binary} (build it: swift build -c release; or set FRAMEGRAPH_BIN)",
              file=sys.stderr)
        return 2
    keep_base = args.keep
    base = Path(tempfile.mkdtemp(prefix="fg-docblocks-"))
    failed = skipped = 0
    start = time.monotonic()
    try:
        inputs = Inputs(base)
        print(f"run-doc-blocks: {len(blocks)} blocks, framegraph = {inputs.binary}", flush=True)
        for problem in inputs.problems:
            print(f"run-doc-blocks: warning: {problem}", flush=True)
        for block in blocks:
            status, detail = run_block(block, inputs, args.keep)
            print(f"{block.name} {status} ({detail})" if status != "FAIL" else f"{block.name} FAIL {detail}", flush=True)
            failed += status == "FAIL"
            skipped += status == "SKIP"
            keep_base = keep_base or status == "FAIL"
    finally:
        if not keep_base:
            shutil.rmtree(base, ignore_errors=True)
    print(f"run-doc-blocks: {len(blocks) - failed - skipped} passed, {failed} failed, {skipped} skipped "
          f"in {time.monotonic() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
