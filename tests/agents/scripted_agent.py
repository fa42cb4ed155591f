"""A coding agent that is a program: the comparison arm's tests run it in place of a model.

    scripted_agent.py PROMPT TREE META BEHAVIOUR [TARGET]

It reads the prompt (which must name TREE and META), then behaves as BEHAVIOUR says:
``migrate`` rewrites the clean fixture's legacy import, calls and pin, ``nothing`` changes
nothing, ``break`` leaves a file that does not compile, ``escape`` migrates and also tries to
write TARGET and the untouched copy beside its tree, ``nostamp`` migrates without stamps,
``slow`` outlasts any short limit, ``backdate`` migrates but stamps a start before it ran.
Every behaviour but ``nostamp`` writes both stamps and a report.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REWRITES = (
    ("import google.generativeai as genai", "from google import genai"),
    (
        'genai.configure(api_key=os.environ.get("GEMINI_API_KEY", "fixture-key"))',
        'client = genai.Client(api_key=os.environ.get("GEMINI_API_KEY", "fixture-key"))',
    ),
    ('MODEL = genai.GenerativeModel("gemini-1.5-flash")', 'MODEL = "gemini-1.5-flash"'),
    (
        "response = MODEL.generate_content(build_prompt(body))",
        "response = client.models.generate_content(model=MODEL, contents=build_prompt(body))",
    ),
)


def stamp(meta: Path, name: str) -> None:
    (meta / name).write_text(f"{int(time.time())}\n", encoding="ascii")


def migrate(tree: Path) -> list[str]:
    changed = []
    source = tree / "summarizer.py"
    if source.exists():
        text = source.read_text(encoding="utf-8")
        for old, new in REWRITES:
            text = text.replace(old, new)
        source.write_text(text, encoding="utf-8")
        changed.append("summarizer.py")
    pins = tree / "requirements.txt"
    if pins.exists() and "google-generativeai" in pins.read_text(encoding="utf-8"):
        pins.write_text("google-genai==2.24.0\n", encoding="utf-8")
        changed.append("requirements.txt")
    return changed


def try_write(path: Path) -> str:
    try:
        path.write_text("written from outside the tree\n", encoding="utf-8")
    except OSError as exc:
        return f"{path}: refused ({exc.strerror})"
    return f"{path}: written"


def main(argv: list[str]) -> int:
    prompt, tree, meta, behaviour = Path(argv[1]), Path(argv[2]), Path(argv[3]), argv[4]
    text = prompt.read_text(encoding="utf-8")
    if str(tree) not in text or str(meta) not in text:
        print("the prompt does not name my tree and meta folder", file=sys.stderr)
        return 3
    if behaviour != "nostamp":
        stamp(meta, "started")
    notes: list[str] = []
    if behaviour == "backdate":
        (meta / "started").write_text("1000\n", encoding="ascii")
    if behaviour in ("migrate", "escape", "nostamp", "backdate"):
        notes += migrate(tree)
    if behaviour == "escape":
        notes.append(try_write(Path(argv[5])))
        notes.append(try_write(tree.parent / "base" / "summarizer.py"))
    if behaviour == "break":
        (tree / "summarizer.py").write_text("def summarise(body:\n    return body\n", encoding="utf-8")
        notes.append("summarizer.py")
    if behaviour == "slow":
        time.sleep(120)
    if behaviour != "nostamp":
        stamp(meta, "finished")
        (meta / "report.md").write_text("\n".join(["# Report", *notes]) + "\n", encoding="utf-8")
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
