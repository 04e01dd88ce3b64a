# SPDX-License-Identifier: MIT
"""The Python programs of README.md and docs/PYTHON.md run as printed."""
import contextlib
import io
import os
import re

ROOT = os.environ.get("HOMA_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")


def python_blocks(path):
    with open(os.path.join(ROOT, path)) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def run_block(code, port=None):
    out = io.StringIO()
    if port is not None:
        code = code.replace("4000", str(port))
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<doc>", "exec"), {"__name__": "__doc__"})
    return out.getvalue()


def test_readme_python_section():
    blocks = python_blocks("README.md")
    assert len(blocks) == 1
    assert run_block(blocks[0]) == "b'ping'\n"


def test_python_md_blocking_example():
    import homa
    with homa.Socket(bind_addr="127.0.0.1") as probe:   # a free port for the example
        port = probe.port
    block = python_blocks("docs/PYTHON.md")[0]
    assert run_block(block, port) == "b'pong'\n"
