"""The project's own test configuration: plugin tests drive the real plugin through pytester."""

pytest_plugins = ["pytester"]
