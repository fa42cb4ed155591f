"""The one way the harness loads a document it did not write: case files, frames, answer keys,
reviewer files, collected rows, scan and dry-run documents.

Each goes through the same sequence: a bounded read that refuses a symlink (``safe_io``), UTF-8,
a parser that refuses what a reviewed file never needs (YAML aliases, duplicate keys), then the
module's pydantic model. Every failure is one ``UntrustedFileError`` whose message names the file;
the owning module turns it into its own error type and adds the row it concerns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ValidationError

from pytest_obelize_bench._util.digests import sha256_bytes
from pytest_obelize_bench._util.safe_io import (
    UntrustedFileError,
    decode_untrusted,
    parse_json_object,
    read_untrusted_text,
)
from pytest_obelize_bench._util.validation import problem_text

#: libyaml's safe loader when PyYAML was built with it: about four times faster on a large file.
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_BASE_LOADER):  # type: ignore[misc]  # PyYAML's loaders are untyped
    """A safe loader that refuses what a reviewed file never needs.

    An alias is refused where it is used a second time, before it is expanded, so an alias bomb
    costs nothing; a duplicate key is refused instead of silently keeping the last value.
    """

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise yaml.constructor.ConstructorError(
                None, None, "an alias (*name) is not allowed in a reviewed file; write the value out", node.start_mark
            )
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} in one mapping", key_node.start_mark
                )
            seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


def parse_yaml(text: str, source: str) -> Any:
    """YAML read strictly; ``UntrustedFileError`` naming ``source`` and the line when it is not."""
    try:
        return yaml.load(text, Loader=StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UntrustedFileError(source, f"is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise UntrustedFileError(source, "is nested too deeply to be read") from None


def yaml_with_digest(data: bytes, source: str) -> tuple[Any, str]:
    """An untrusted file's bytes as YAML, with the sha256 of exactly those bytes: a run names the file
    by the digest of what it parsed, never by a second read that could see another file."""
    return parse_yaml(decode_untrusted(data, source), source), sha256_bytes(data)


def read_yaml(path: Path, cap: int) -> Any:
    """An untrusted YAML file, read bounded and strictly."""
    return parse_yaml(read_untrusted_text(path, cap), str(path))


def validated[M: BaseModel](model: type[M], data: Any, source: str) -> M:
    """``data`` as ``model``; ``UntrustedFileError`` with the first problem's field and message."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UntrustedFileError(source, problem_text(exc.errors()[0])) from None


def load_json[M: BaseModel](path: Path, model: type[M], cap: int) -> M:
    """An untrusted JSON object as ``model``, validated from the text (strict JSON mode)."""
    source = str(path)
    text = read_untrusted_text(path, cap)
    parse_json_object(text, source)
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise UntrustedFileError(source, problem_text(exc.errors()[0])) from None


def read_document[T](
    path: Path,
    cap: int,
    parse: Callable[[Any, str], T],
    error: Callable[[str], Exception],
    where: str = "",
    *,
    form: Literal["text", "json", "yaml"] = "text",
) -> T:
    """An untrusted file read bounded (as text, one JSON object or strict YAML) and handed to its
    owner's ``parse(content, source)``; a file that cannot be read raises ``error`` with one line
    naming it (``where`` says which part of a document's shape the file itself is, for owners that
    name rows)."""
    source = str(path)
    try:
        text = read_untrusted_text(Path(path), cap)
        content: Any = text
        if form == "json":
            content = parse_json_object(text, source)
        elif form == "yaml":
            content = parse_yaml(text, source)
    except UntrustedFileError as exc:
        raise error(f"{path}: {where}{exc.problem}") from None
    return parse(content, source)


def load_optional_json[M: BaseModel](path: Path, model: type[M], cap: int, what: str) -> M | None:
    """A JSON document the harness wrote (a note, a history) as ``model``; None when there is none,
    ``UntrustedFileError`` saying it is not a ``what`` when it cannot be read or is not one."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        return load_json(path, model, cap)
    except UntrustedFileError as exc:
        raise UntrustedFileError(str(path), f"not a {what}: {exc.problem}") from None


__all__ = [
    "StrictLoader",
    "load_json",
    "load_optional_json",
    "parse_yaml",
    "read_document",
    "read_yaml",
    "validated",
    "yaml_with_digest",
]
