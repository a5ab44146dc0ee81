"""A block type whose compiled form is faulty (a plugin's lower() that raises, or gives
something other than a Lowering; a pack() blocksim no longer reads) is named with the method
and what it did: accelerated mode refuses the diagram (exit 2, the block at its line), auto
runs it in normal mode with a note, and `check --code` says which block has no compiled C.
They were tracebacks from the code generator (AttributeError, ValueError, the plugin's own
error). A plugin's declare() or derive() that raises, or gives other than numbers, is the
block's error at load, in every mode. The plugin is conftest's `twice` (y = 2u); its
diagram integrates 2 x a step of 1 at t = 0.5 to t = 1: i(1) = 2 * (1 - 0.5) = 1, which
rk4 integrates exactly (the step is on its grid)."""
import json

import numpy as np
import pytest

from blocksim.accel import mode
from blocksim.accel.lowering import Lowering
from blocksim.cli import main


def _raises(*args):
    raise RuntimeError("a bug in the plugin")


# type -> (the faulty method, what the message says it did)
FAULTS = {
    "lower_raises": ({"lower": _raises}, "its lower() raised RuntimeError: a bug in the plugin"),
    "lower_dict": ({"lower": lambda self, c: {"output": ""}},
                   "its lower() gave a dict, not a Lowering"),
    "lower_code": ({"lower": lambda self, c: Lowering({"output": 42})},
                   "its lower() gave code that is not C text per method"),
    "lower_scratch": ({"lower": lambda self, c: Lowering({"output": ""}, scratch="T")},
                      "its lower() gave a str as the scratch, not a number of doubles"),
    "pack_kept": ({"pack": lambda self: [2.0]}, "its pack() is no longer read: declare its "
                                                "numbers (declare and derive, docs/custom-blocks.md)"),
}
# type -> (the faulty run data method, what the message says it did)
RUN_DATA_FAULTS = {
    "declare_raises": ({"declare": _raises}, "failed in declare(): RuntimeError: a bug in "
                                             "the plugin"),
    "derive_raises": ({"derive": _raises}, "failed in derive(): RuntimeError: a bug in the "
                                           "plugin"),
    "derive_text": ({"derive": lambda self, p: {"gain": "two"}}, "failed in derive(): "
                                                              "ValueError"),
    "derive_missing": ({"derive": lambda self, p: {}}, "failed in derive(): KeyError: 'gain'"),
}


def test_the_sound_plugin_runs_compiled(plugin_diagram, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(plugin_diagram("twice", {})), "--mode", "accelerated",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    with np.load(out / "results.npz") as results:
        assert results["i"][-1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", FAULTS)
def test_a_faulty_compiled_form_is_named_with_its_method(plugin_diagram, tmp_path, capsys,
                                                         monkeypatch, kind):
    path = plugin_diagram(kind, {kind: FAULTS[kind][0]})
    said = FAULTS[kind][1]
    assert main(["run", str(path), "--mode", "accelerated", "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert f"{kind}.yaml:5: error: block 'P': accelerated mode: block type '{kind}' has a " \
           f"faulty compiled form: {said}" in err and "Traceback" not in err
    assert main(["check", str(path), "--code"]) == 2
    captured = capsys.readouterr()
    assert f"has a faulty compiled form: {said}" in captured.err and not captured.out
    assert "Traceback" not in captured.err
    # auto, a run long on paper (it would compile at once): normal mode, and the note says why
    monkeypatch.setattr(mode, "normal_seconds", lambda model: 60.0)
    out = tmp_path / "auto"
    assert main(["run", str(path), "--no-plots", "--out", str(out)]) == 0
    assert f"note: normal mode: no compiled form for P ({kind}), whose " \
           f"{said.removeprefix('its ')}" in capsys.readouterr().err
    assert json.loads((out / "meta.json").read_text())["mode"]["mode"] == "normal"
    with np.load(out / "results.npz") as results:
        assert results["i"][-1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", RUN_DATA_FAULTS)
@pytest.mark.parametrize("mode_", ["normal", "accelerated"])
def test_a_faulty_run_data_declaration_is_the_blocks_error(plugin_diagram, capsys, kind,
                                                             mode_):
    path = plugin_diagram(kind, {kind: RUN_DATA_FAULTS[kind][0]})
    assert main(["run", str(path), "--mode", mode_, "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert f"{kind}.yaml:5: error: block 'P': plugin block type '{kind}'" in err
    assert RUN_DATA_FAULTS[kind][1] in err and "Traceback" not in err
