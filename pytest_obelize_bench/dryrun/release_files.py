"""Where each release's dry run of a frame is kept, and the pack's history read from them.

``results/dryrun/<pack slug>/releases/<release>/dryrun.json`` holds one release's whole dry run of
the frame (written with its note, as the pack's published dry run is); ``history.json`` beside the
pack's ``dryrun.json`` is the history ``obelize-bench history --frame PACK`` built from them.
``summarize --check`` builds it again and fails when the file differs, so a release kept after the
history was written cannot go unseen.
"""

from __future__ import annotations

from pathlib import Path

from pytest_obelize_bench._util.caps import POLICY_BYTES, RECORD_BYTES
from pytest_obelize_bench._util.documents import load_optional_json
from pytest_obelize_bench._util.safe_io import UntrustedFileError, read_untrusted
from pytest_obelize_bench.casefile.promotion_policy import POLICY_FILE_NAME, PolicyError, load_policy
from pytest_obelize_bench.dryrun.outcomes import DOCUMENT_NAME, DryRunDocument, load_dryrun_document, pack_slug
from pytest_obelize_bench.dryrun.release_history import FRAME_HISTORY_NAME, FrameHistory, build_frame_history
from pytest_obelize_bench.measure.measure_publication import RELEASES

__all__ = [
    "RELEASES",
    "collect_frame_history",
    "frame_histories",
    "load_frame_history",
    "pack_folder",
    "release_documents",
]

#: history.json names every repository under every release: a few hundred bytes each.
FRAME_HISTORY_BYTES = 64 * RECORD_BYTES


def pack_folder(results: Path, pack: str) -> Path:
    return Path(results) / "dryrun" / pack_slug(pack)


def release_documents(folder: Path) -> list[tuple[str, DryRunDocument]]:
    """Every release's kept dry run in a pack's folder, by folder name; ``DryRunRecordError`` (one line)
    when one cannot be read."""
    root = Path(folder) / RELEASES
    if not root.is_dir():
        return []
    found = []
    for release in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0] != "."):
        document = release / DOCUMENT_NAME
        if document.exists() or document.is_symlink():
            found.append((release.name, load_dryrun_document(document)))
    return found


def _alpha_and_min_n(cases_dir: Path) -> tuple[float, int]:
    path = Path(cases_dir) / POLICY_FILE_NAME
    try:
        policy = load_policy(read_untrusted(path, POLICY_BYTES), str(path))[0]
    except (UntrustedFileError, PolicyError) as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    return policy.alpha, policy.min_n


def collect_frame_history(results: Path, pack: str, cases_dir: Path) -> FrameHistory:
    """The pack's history from its kept release documents; ValueError (one line) when an input is unreadable."""
    alpha, min_n = _alpha_and_min_n(cases_dir)
    return build_frame_history(pack, release_documents(pack_folder(results, pack)), alpha=alpha, min_n=min_n)


def load_frame_history(folder: Path) -> FrameHistory | None:
    """The pack's written history, None when it has none; ValueError (one line) when unreadable."""
    return load_optional_json(Path(folder) / FRAME_HISTORY_NAME, FrameHistory, FRAME_HISTORY_BYTES, "frame history")


def frame_histories(results: Path, cases_dir: Path, *, recheck: bool = False) -> tuple[list[FrameHistory], list[str]]:
    """Every pack's written history and, with ``recheck`` (``summarize --check``), why one differs from
    what its releases give now (the blocks, figures and pages are drawn from the written one alone)."""
    histories: list[FrameHistory] = []
    problems: list[str] = []
    root = Path(results) / "dryrun"
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []:
        history = load_frame_history(folder)
        if history is None:
            continue
        if pack_slug(history.pack) != folder.name:
            raise ValueError(f"{folder / FRAME_HISTORY_NAME}: field pack says {history.pack}, not the folder's pack")
        histories.append(history)
        if recheck and collect_frame_history(results, history.pack, cases_dir) != history:
            problems.append(
                f"{folder / FRAME_HISTORY_NAME} differs from what its releases give: "
                f"run `obelize-bench history --frame {history.pack}`"
            )
    return histories, problems
