"""The Weka bridge (experiments.peers.weka): Java helpers are compiled where no one else writes."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from experiments.peers import weka
from tests.support.weka import needs_javac

_SOURCE = "public class Hello { public static void main(String[] a) { } }\n"


@needs_javac
def test_a_java_helper_is_compiled_once_in_a_private_temporary_folder():
    # never run a Java class from a fixed, shared path under /tmp
    folder = weka.compiled_java("Hello", _SOURCE)
    assert (folder / "Hello.class").exists()
    assert str(folder.parent) == tempfile.gettempdir()
    assert folder.name.startswith("onlinebma-weka-Hello-")
    assert folder.name != "onlinebma-weka-Hello-"  # a random suffix
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700  # mkdtemp: this user only
    assert weka.compiled_java("Hello", _SOURCE) == folder  # once per process


@needs_javac
def test_a_helper_that_does_not_compile_is_named_in_the_error():
    with pytest.raises(RuntimeError, match="Broken"):
        weka.compiled_java("Broken", "public class Broken { syntax error }\n")
