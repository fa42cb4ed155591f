"""The most bytes the harness reads of each kind of file, in one place.

Every reader of a kind of file uses its cap here, so a file one reader accepts is never refused
by another, and a planted 2 GB file is refused by all of them. A writer that bounds what it
writes (the graded facts) uses the same number, so whatever it wrote can be read back.
"""

from __future__ import annotations

MiB = 1 << 20

#: A case's record (``<case>.json``) and its repeats.
RECORD_BYTES = 4 * MiB
#: A case's graded facts (``artefacts/<case>.json``), bounded when written too.
GRADED_FACTS_BYTES = 5 * MiB
#: A run's ``run.json``, a round's ``publication.json`` and ``summary.json``.
MANIFEST_BYTES = 1 * MiB
#: A promotion decision document.
DECISION_BYTES = 4 * MiB
#: The promotion policy (``cases/promotion.yaml``).
POLICY_BYTES = 256 * 1024
#: One of the tool's run-folder documents (``findings.json``, ``plan.json``, ``run.json``).
TOOL_DOCUMENT_BYTES = 20 * MiB
#: The ``latest`` pointer of the tool's run folders.
POINTER_BYTES = 4096
#: A round's collected error-analysis rows (``results/errors/round-N.json``).
COLLECTED_ERRORS_BYTES = 32 * MiB
#: The reviewer's error-analysis file (``cases/errors-round-N.yaml``).
REVIEW_BYTES = 4 * MiB
#: The review answers keyed to patches (``cases/reviews/round-N.yaml``).
PATCH_REVIEWS_BYTES = 4 * MiB
#: A patch shown for review (obelize's ``patch.diff``).
PATCH_BYTES = 1 * MiB
#: A measurement's document under ``results/``: the Gate 1 scan, a dry run, the comparison record.
MEASURE_DOCUMENT_BYTES = 64 * MiB
#: A case file, a fixture's ``case.yaml``, a frame or an answer key.
CASE_FILE_BYTES = 8 * MiB
#: A JUnit report a suite wrote.
JUNIT_BYTES = 50 * MiB
#: A requirements file whose content keys an environment.
REQUIREMENTS_BYTES = 64 * 1024
#: The comparison arm's file (``--bench-compare=ARM.yaml``) and its fixed prompt.
ARM_FILE_BYTES = 256 * 1024
PROMPT_BYTES = 256 * 1024
#: The migration guide the comparison arm is given.
GUIDE_BYTES = 32 * MiB

__all__ = [
    "ARM_FILE_BYTES",
    "CASE_FILE_BYTES",
    "COLLECTED_ERRORS_BYTES",
    "DECISION_BYTES",
    "GRADED_FACTS_BYTES",
    "GUIDE_BYTES",
    "JUNIT_BYTES",
    "MANIFEST_BYTES",
    "MEASURE_DOCUMENT_BYTES",
    "PATCH_BYTES",
    "PATCH_REVIEWS_BYTES",
    "POINTER_BYTES",
    "POLICY_BYTES",
    "PROMPT_BYTES",
    "RECORD_BYTES",
    "REQUIREMENTS_BYTES",
    "REVIEW_BYTES",
    "TOOL_DOCUMENT_BYTES",
]
