"""Markers for the tests that run Weka 3.6.14: each is marked ``weka`` and skipped, with the
reason, where Java or Weka's jar is missing (``$WEKA_JAR``, default Debian's
``/usr/share/java/weka.jar``; see :mod:`experiments.peers.weka`).

Apply them as decorators. Each applies both marks to the test itself: a mark given to another
mark (``pytest.mark.weka(pytest.mark.skipif(...))``) becomes an argument of the outer mark and
skips nothing.
"""

from __future__ import annotations

import pytest

from experiments.peers.weka import javac_available, weka_available


def needs_weka(test):
    """Runs Weka's own classes (``java -cp $WEKA_JAR ...``): needs ``java`` and the jar."""
    skip = pytest.mark.skipif(not weka_available(), reason="needs java and Weka 3.6.14's jar")
    return pytest.mark.weka(skip(test))


def needs_javac(test):
    """Compiles a Java helper against Weka's jar: needs ``java``, ``javac`` and the jar."""
    skip = pytest.mark.skipif(not javac_available(),
                              reason="needs java, javac and Weka 3.6.14's jar")
    return pytest.mark.weka(skip(test))
