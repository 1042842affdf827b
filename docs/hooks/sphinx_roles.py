r"""The API reference's griffe extension and the site's mkdocs hook.

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
- reStructuredText maths render: a ``.. math::`` directive becomes a ``$$ ... $$`` block and a
  ``:math:`` role an inline ``\( ... \)``, which the site's ``pymdownx.arithmatex`` hands
  to MathJax.
- A summary is not cut: the member tables show the first *line* of each docstring, so the
  first paragraph is joined into one line (Markdown renders it the same).
- River's methods that our classes inherit (``clone``, ``mutate``, ``learn_many``...) keep
  their text but lose River's Examples, which build River's ``LinearRegression`` and were
  repeated on every class page.
"""

from __future__ import annotations

import re

import griffe

ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:`(?P<body>[^`]+)`")


def _span(match: re.Match) -> str:
    body = match.group("body").strip()
    if match.group(0).startswith(":math:"):
        return f"\\({body}\\)"
    explicit = re.fullmatch(r"(?P<text>.+?)\s*<[^<>]+>", body)
    if explicit:
        body = explicit.group("text")
    elif body.startswith("~"):
        body = body[1:].rsplit(".", 1)[-1]
    return f"`{body.lstrip('.')}`"


def strip_roles(text: str) -> str:
    r"""``text`` with every Sphinx role turned into a Markdown code span (``:math:`` into
    inline maths).

    >>> strip_roles("See :class:`~onlinebma.records.FeatureKinds` and :meth:`.merge`.")
    'See `FeatureKinds` and `merge`.'
    >>> strip_roles(":func:`the loader <onlinebma.datasets.catalog>`, :mod:`onlinebma.batch`")
    '`the loader`, `onlinebma.batch`'
    >>> print(strip_roles(r"weight :math:`e^{-l_u}`"))
    weight \(e^{-l_u}\)
    """
    return ROLE.sub(_span, text)


def math_blocks(text: str) -> str:
    r"""``text`` with each reStructuredText ``.. math::`` directive (its expression on the same
    line, on the lines indented below it, or both) turned into a ``$$`` block.

    >>> print(math_blocks("so\n\n.. math:: a = b,\n          c = d\n\nafter"))
    so
    <BLANKLINE>
    $$
    a = b,
    c = d
    $$
    <BLANKLINE>
    after

    A source line that ends in ``\quad`` separates two formulas: there the display breaks
    (MathJax does not wrap a formula wider than the page).

    >>> print(math_blocks(".. math:: a = b,\\quad\n          c = d"))
    <BLANKLINE>
    $$
    \begin{gathered}
    a = b, \\
    c = d
    \end{gathered}
    $$
    """
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        match = re.match(r"^(?P<indent>\s*)\.\. math::\s*(?P<first>.*)$", lines[i])
        if not match:
            out.append(lines[i])
            i += 1
            continue
        indent = match.group("indent")
        body = [match.group("first")] if match.group("first").strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
            body.append(lines[i].strip())
            i += 1
        body = _broken_at_quads([b for b in body if b])
        trailing = [""] if i < len(lines) else []
        out += ["", f"{indent}$$", *(f"{indent}{b}" for b in body), f"{indent}$$",
                *trailing]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def _broken_at_quads(body: list[str]) -> list[str]:
    """The lines of a display, in a ``gathered`` environment broken after each line that
    ends in ``\\quad`` or ``\\qquad`` (dropped), or unchanged when none does."""
    quad = re.compile(r"\\q?quad\s*$")
    if not any(quad.search(line) for line in body[:-1]):
        return body
    lines = [quad.sub(lambda _: r" \\", line) if quad.search(line) and n < len(body) - 1
             else line for n, line in enumerate(body)]
    return ["\\begin{gathered}", *lines, "\\end{gathered}"]


def one_line_summary(text: str) -> str:
    r"""``text`` with its first paragraph on one line, unless it is not prose (a list, a table,
    a heading, code).

    >>> one_line_summary("A summary that\nwraps.\n\nMore\ntext.")
    'A summary that wraps.\n\nMore\ntext.'
    """
    first, sep, rest = text.partition("\n\n")
    lines = first.split("\n")
    if len(lines) < 2 or any(re.match(r"\s*([-*+|#>]|\d+\.\s|```|\.\.)", x) or
                             re.fullmatch(r"\s*[-=]{3,}\s*", x) for x in lines):
        return text
    return " ".join(x.strip() for x in lines) + sep + rest


EXAMPLES = re.compile(r"^Examples\n-{3,}\n.*?(?=^[A-Z][A-Za-z ]+\n-{3,}\n|\Z)", re.S | re.M)


def without_examples(text: str) -> str:
    r"""``text`` without its numpydoc Examples section.

    >>> without_examples("Do.\n\nExamples\n--------\n>>> 1\n1\n\nNotes\n-----\nN.")
    'Do.\n\nNotes\n-----\nN.'
    """
    return EXAMPLES.sub("", text).rstrip()


class SphinxRoles(griffe.Extension):
    """Rewrite each docstring once, as griffe loads its object (ours and River's); then, once
    the package is loaded, inherit docstrings and drop the parameter attributes."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            text = one_line_summary(math_blocks(strip_roles(obj.docstring.value)))
            if obj.path.startswith("river.") and obj.is_function:
                text = without_examples(text)
            obj.docstring.value = text

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        ours = pkg.path == "onlinebma"  # River's classes: only the parameter attributes go
        for cls in _classes(pkg):
            if ours and not cls.docstring:
                runtime = _runtime_docstring(cls)
                if runtime:
                    cls.docstring = griffe.Docstring(
                        one_line_summary(math_blocks(strip_roles(runtime))), parent=cls)
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
    return math_blocks(strip_roles(markdown))
