"""The API reference's griffe extension and the site's mkdocs hook.

- Sphinx roles become code spans. Docstrings here and in River write ``:class:`~pkg.Name```,
  ``:meth:`merge``` and the like, which Markdown would print literally. Every role
  (``:class:``, ``:mod:``, ``:meth:``, ``:func:``, ``:attr:``, ``:obj:``, ``:exc:``, ``:data:``,
  ``:ref:``, ``:math:``, ``:py:...:``) becomes a code span of its target; ``~`` keeps the last
  dotted part, as Sphinx does, and ``text <target>`` keeps the text. The extension rewrites
  docstrings, the hook (``on_page_markdown``) the pages (results pages quote experiments'
  docstrings).
- A method that overrides one without a docstring of its own shows the docstring it
  overrides, as ``inspect.getdoc`` and ``help()`` do (``learn_one`` shows River's).
- A class whose docstring is built at import (an f-string assigned to ``__doc__``, which a static
  reading cannot see) gets the imported class's docstring.
- A constructor parameter stored as an attribute of the same name, or an attribute the
  class's docstring describes under Attributes, is listed once, there, not again as an
  undocumented attribute.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`(?P<body>[^`]+)`")


def _span(match: re.Match) -> str:
    body = match.group("body").strip()
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<[^<>]+>", body)
    if explicit:
        body = explicit.group("text")
    elif body.startswith("~"):
        body = body[1:].rsplit(".", 1)[-1]
    return f"`{body.lstrip('.')}`"


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx role turned into a Markdown code span.

    >>> strip_roles("See :class:`~onlinebma.records.FeatureKinds` and :meth:`.merge`.")
    'See `FeatureKinds` and `merge`.'
    >>> strip_roles(":func:`the loader <onlinebma.datasets.catalog>`, :mod:`onlinebma.batch`")
    '`the loader`, `onlinebma.batch`'
    """
    return ROLE.sub(_span, text)


class SphinxRoles(griffe.Extension):
    """Rewrite each docstring once, as griffe loads its object (ours and River's); then, once
    the package is loaded, inherit docstrings and drop the parameter attributes."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        ours = pkg.path == "onlinebma"  # River's classes: only the parameter attributes go
        for cls in _classes(pkg):
            if ours and not cls.docstring:
                runtime = _runtime_docstring(cls)
                if runtime:
                    cls.docstring = griffe.Docstring(strip_roles(runtime), parent=cls)
            init = cls.members.get("__init__")
            params = {p.name for p in init.parameters} if init is not None and \
                not init.is_alias and init.is_function else set()
            params |= _documented_attributes(cls)
            for name, member in list(cls.members.items()):
                if member.is_alias:
                    continue
                listed = member.is_attribute or "property" in member.labels
                if listed and name in params and not member.docstring:
                    cls.del_member(name)
                elif ours and member.is_function and not member.docstring:
                    inherited = _inherited_docstring(cls, name)
                    if inherited is not None:
                        member.docstring = griffe.Docstring(inherited, parent=member)


def _classes(obj):
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_class:
            yield member
            yield from _classes(member)
        elif member.is_module:
            yield from _classes(member)


ATTRIBUTES = re.compile(r"^(\s*)Attributes\n\s*-{3,}\n(?P<body>.*?)(?:\n\s*\n\s*\w+\n\s*-{3,}|\Z)",
                        re.S | re.M)


def _runtime_docstring(cls):
    import importlib
    import inspect

    try:
        obj = getattr(importlib.import_module(cls.module.path), cls.name)
    except Exception:  # not importable here: leave it as the source says
        return None
    return inspect.cleandoc(obj.__doc__) if obj.__doc__ else None


def _documented_attributes(cls) -> set:
    """The names under the numpydoc Attributes section of ``cls``'s docstring (read from the
    text: parsing every docstring would warn about ones no page shows)."""
    match = ATTRIBUTES.search(cls.docstring.value) if cls.docstring else None
    if match is None:
        return set()
    lines = match.group("body").splitlines()
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return {name.strip() for x in lines if x.strip() and len(x) - len(x.lstrip()) == indent
            for name in x.split(":")[0].split(",")}


def _inherited_docstring(cls, name):
    try:
        bases = cls.mro()
    except Exception:  # a base griffe could not resolve: nothing to inherit from
        return None
    for base in bases:
        member = base.members.get(name)
        if member is not None and member.docstring:
            return member.docstring.value
    return None


def on_page_markdown(markdown: str, **kwargs) -> str:
    """The mkdocs hook: the same for the pages (results pages quote experiments' docstrings)."""
    return strip_roles(markdown)
