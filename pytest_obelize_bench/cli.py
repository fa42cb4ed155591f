"""The obelize-bench console script (placeholder)."""


def main(argv: list[str] | None = None) -> int:
    return 0
