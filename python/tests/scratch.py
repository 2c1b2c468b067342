"""Scratch directories for the tests, removed when the test process exits.

The tests build binaries, fixtures and copies of DataViews once per
session and hand their paths to subprocesses, so pytest's per-test
tmp_path does not fit; every such directory comes from here so that no
run leaves one behind."""
import atexit
import shutil
import tempfile


def scratch_dir(prefix):
    """A new directory, removed (with what is in it) at exit."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d
