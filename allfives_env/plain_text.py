"""Docstrings as plain text for ``--help``: the reStructuredText markup the docs render is noise in a terminal.

``allfives --help`` and ``python -m allfives_training.train --help`` show their module docstrings; those are
written for the documentation (``code``, :class:`~pkg.Name`), so the parsers show :func:`plain_text` of them.
"""

from __future__ import annotations

import re

__all__ = ["plain_text"]

_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(doc: str) -> str:
    """``doc`` without reST markup: ``code`` becomes code, :class:`~a.B` becomes B (:mod:`a.b`: a.b)."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if m.group(0).count("~") else m.group(1), doc)
    return _LITERAL.sub(r"\1", text)
