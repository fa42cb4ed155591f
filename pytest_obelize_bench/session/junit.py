"""The benchmark's view in the JUnit report pytest wrote: classnames and the error tier.

pytest's report shows every tier as a pass (a tier is a measurement, not a test failure) and
derives the classname from the node id (``cases.cases.yaml``). After pytest has written the file,
each benchmark test case gets the case file's name as its classname, and a case whose tier is
``error`` gets an ``<error>`` element carrying its step, reason and detail, so CI dashboards show
the cases that measured nothing. Other tiers stay passes with their ``tier`` property.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from pytest_obelize_bench.grading.record import Record


def _tier_of(testcase: ET.Element) -> str | None:
    for prop in testcase.iter("property"):
        if prop.get("name") == "tier":
            return prop.get("value")
    return None


def rewrite_junit(path: Path, records: Mapping[str, Record], classname: str | None) -> int:
    """Rewrite the report at ``path`` in place; the number of error elements added.

    Only test cases that carry a ``tier`` property and name a case of ``records`` are touched;
    a missing or unparsable report is left alone.
    """
    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return 0
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    added = 0
    for suite in suites:
        errors_here = 0
        for testcase in suite.iter("testcase"):
            record = records.get(testcase.get("name", ""))
            if record is None or _tier_of(testcase) is None:
                continue
            if classname:
                testcase.set("classname", classname)
            if record.tier != "error" or record.error is None or testcase.find("error") is not None:
                continue
            error = ET.SubElement(
                testcase,
                "error",
                message=f"{record.error.step}: {record.error.reason}",
                type=record.error.reason,
            )
            error.text = f"step: {record.error.step}\nreason: {record.error.reason}\ndetail: {record.error.detail}"
            errors_here += 1
        if errors_here:
            suite.set("errors", str(int(suite.get("errors", "0")) + errors_here))
            added += errors_here
    if added or classname:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    return added


__all__ = ["rewrite_junit"]
