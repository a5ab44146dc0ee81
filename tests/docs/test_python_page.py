"""docs/python.md run as a notebook would: its snippets in order, in one namespace, from the
repository's top folder, and the values it prints checked against the robot library and
the recorded arrays."""
import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest
from docfiles import blocks

ROOT = Path(__file__).resolve().parents[2]


def snippets():
    return [text for lang, _, text in blocks("python.md") if lang == "python"]


def test_the_page_runs_in_order_and_prints_what_it_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink(ROOT / "diagrams", tmp_path / "diagrams")
    namespace, printed = {}, []
    for text in snippets():
        if "needs pandas" in text:
            try:
                import pandas  # noqa: F401
            except ImportError:
                continue  # not a dependency of blocksim: this one snippet is skipped
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(text, "docs/python.md", "exec"), namespace)
        printed.append(out.getvalue())
    model, result = namespace["model"], namespace["result"]
    # the values set last are in force and listed as overrides
    assert model.block("Kd").p.K == 40 and model.settings.stop == 3
    assert ["blocks.Kp.K", 400] in result.meta["overrides"]
    text = "".join(printed)
    assert "<Result demo3:" in text and "['t', 'q', 'qd', 'tau', 'qdes', 'e']" in text
    assert "['t', 'q[0]', 'q[1]', 'q[2]']" in text
    # the Puma's fkine(qz) position as printed, the published (0.4521, -0.15005, 0.4318) m
    assert "[ 0.4521  -0.15005  0.4318 ]" in text or "[ 0.4521 -0.15005  0.4318]" in text
    # the error shrinks as Kp grows, as the loop printed it
    errors = [float(line.split("error ")[1].split()[0]) for line in text.splitlines()
              if line.startswith("Kp = ")]
    assert len(errors) == 3 and errors[0] > errors[1] > errors[2]
    np.testing.assert_array_equal(namespace["q"], result["q"])


def test_the_page_is_linked_from_the_readme_and_the_tutorial():
    assert "docs/python.md" in (ROOT / "README.md").read_text()
    assert "(python.md)" in (ROOT / "docs" / "tutorial.md").read_text()


@pytest.mark.parametrize("name", ["load", "execute", "run", "sweep"])
def test_the_entry_points_it_documents_exist(name):
    import blocksim
    assert callable(getattr(blocksim, name))
