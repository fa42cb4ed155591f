"""The one reader of the command line: ``getoption`` is called here and nowhere else in the package.

``options_of`` builds a session's ``BenchOptions`` once (at configure, on the controller and on
each worker) and keeps it in the config's stash; every hook, item and controller takes its fields
from there. A bad value or pair becomes pytest's one-line usage error before anything runs.
"""

from __future__ import annotations

import pytest

from pytest_obelize_bench.options.build import READ_NAMES, READ_WITH_DEFAULT, OptionError, build_options
from pytest_obelize_bench.options.model import BenchOptions

OPTIONS_KEY: pytest.StashKey[BenchOptions] = pytest.StashKey()


def read_options(config: pytest.Config) -> BenchOptions:
    """The options of ``config``; ``pytest.UsageError`` (one line) on a bad value or pair."""
    given = {name: config.getoption(name) for name in READ_NAMES}
    given.update({name: config.getoption(name, default) for name, default in READ_WITH_DEFAULT.items()})
    try:
        return build_options(given)
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from None


def options_of(config: pytest.Config) -> BenchOptions:
    """The session's options, read once (at configure) and kept in the config's stash."""
    options = config.stash.get(OPTIONS_KEY, None)
    if options is None:
        options = config.stash[OPTIONS_KEY] = read_options(config)
    return options


__all__ = ["OPTIONS_KEY", "options_of", "read_options"]
