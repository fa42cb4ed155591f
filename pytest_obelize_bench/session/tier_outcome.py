"""How a tier shows in the terminal, and the session's own exit statuses.

Kept free of pytest and of the controller, so the plugin, the round's kind and the controller all
read it without importing each other.
"""

from __future__ import annotations

from pytest_obelize_bench.isolation.reachability import EXIT_PREFLIGHT as _EXIT_PREFLIGHT

#: category, letter, word and colour of each tier in the terminal.
TIER_DISPLAY: dict[str, tuple[str, str, dict[str, bool]]] = {
    "verified_success": ("V", "VERIFIED_SUCCESS", {"green": True, "bold": True}),
    "patched_unverified": ("P", "PATCHED_UNVERIFIED", {"cyan": True}),
    "partial": ("H", "PARTIAL", {"yellow": True}),
    "unsupported": ("N", "UNSUPPORTED", {"purple": True}),
    "wrong": ("W", "WRONG", {"red": True, "bold": True}),
    "error": ("!", "ERROR", {"red": True}),
}
#: the ``-r`` character that lists the cases per tier.
REPORT_CHAR = "T"
#: the exit status of a session in which a case reached a tier named by --bench-fail-on.
EXIT_TIER_GATE = 6
#: the exit status of a session that stopped because the results folder could not be written.
EXIT_RESULTS_UNWRITABLE = 7
#: the exit status of a round stopped by its preflight (nothing ran).
EXIT_PREFLIGHT = _EXIT_PREFLIGHT


def tier_status(tier: str, *, fixtures: bool) -> tuple[str, str, tuple[str, dict[str, bool]]]:
    """The report's (category, letter, (word, markup)) for a case that reached ``tier``.

    In a round the tier is the category (a measurement, not a failure). In the fixtures pass a
    fixture at its expected tier passed, whatever the tier (``error`` included), and shows the
    tier beside it; only a mismatch with expected.json fails the item.
    """
    letter, word, markup = TIER_DISPLAY[tier]
    if fixtures:
        return "passed", letter, (f"PASSED ({tier})", {"green": True})
    return tier, letter, (word, markup)


__all__ = [
    "EXIT_PREFLIGHT",
    "EXIT_RESULTS_UNWRITABLE",
    "EXIT_TIER_GATE",
    "REPORT_CHAR",
    "TIER_DISPLAY",
    "tier_status",
]
