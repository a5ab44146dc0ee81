"""Block types from Python: `blocksim.register_block`, and what a diagram can never do
(name code instead of a type). The installed-plugin path is tested end to end in
tests/docs/test_custom_blocks.py."""
import os
import subprocess
import sys

import numpy as np
import pytest

import blocksim
from blocksim.language import library
from blocksim.block import Block, In, Out
from blocksim.cli import main
from blocksim.language.behaviour import Behaviour


class Doubler(Block):
    """y = 2*u, element-wise."""

    def ports(self):
        return [In("u")], [Out("y")]

    def output(self, t):
        np.multiply(self.u[0], 2.0, out=self.y[0])


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(library, "_registered", {})
    return library._registered


def write(tmp_path, text):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    return path


DIAGRAM = """blocksim: 1
blocks:
  C: {type: clock}
  D: {type: %s}
wires: [C -> D]
simulation: {stop: 1, output_interval: 0.5}
record: {y: D.y}
"""


def test_a_registered_class_is_a_block_type(registry, tmp_path, capsys):
    cls = type("Doubler", (Doubler,), {})
    assert blocksim.register_block(cls, name="doubler") is cls and cls.type == "doubler"
    result = blocksim.run(write(tmp_path, DIAGRAM % "doubler"))
    np.testing.assert_allclose(result["y"], 2 * result.t)
    assert main(["blocks"]) == 0
    out = capsys.readouterr().out
    assert f"Plugins from {__name__.partition('.')[0]}" in out and "  doubler " in out


def test_register_block_checks_its_arguments(registry):
    with pytest.raises(TypeError, match="subclass of blocksim.block.Block"):
        blocksim.register_block(object, name="thing")
    with pytest.raises(ValueError, match="'gain' is a built-in block type"):
        blocksim.register_block(type("G", (Doubler,), {}), name="gain")
    with pytest.raises(ValueError, match="invalid block type name"):
        blocksim.register_block(type("G", (Doubler,), {}), name="Bad-Name")
    with pytest.raises(ValueError, match="must agree"):
        blocksim.register_block(type("G", (Doubler,), {"type": "one"}), name="two")


@pytest.mark.parametrize("type_text", ["os:system", "'blocksim.block:Block'",
                                       "tests.engine.test_plugins:Doubler", "subprocess.run"])
def test_a_diagram_cannot_name_code(type_text, tmp_path, capsys):
    before = set(sys.modules)
    path = write(tmp_path, DIAGRAM % type_text)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: error: block 'D': unknown block type" in err or \
        f"{path}:4: error: block 'D' needs" in err or "block type must be a name" in err, err
    assert not {"subprocess", "os.system"} & (set(sys.modules) - before)


class StateOfTwo(Block):
    """An output aliasing the whole continuous state, but a state of two elements while the
    output is a scalar (issue 23 item 11: a traceback from the layout before)."""

    def ports(self):
        return [In("u")], [Out("y", shape=(), feedthrough=(), state=STATE)]

    def continuous_state(self):
        return np.zeros(2)


class WatchesNothing(Doubler):
    """Declares the rate of an input it does not have."""
    rates = ("v",)


STATE = True


def refused_at_block_d(path, tmp_path, capsys, needles):
    """check and run of `path` end with exit 2 at block D's line, saying every one of
    `needles`, without a traceback."""
    for command in ("check", "run"):
        assert main([command, str(path), "--out", str(tmp_path / "out"), "--quiet"]
                    if command == "run" else [command, str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}:4: error: block 'D'" in err and "Traceback" not in err, err
        for needle in needles:
            assert needle in err, (needle, err)


@pytest.mark.parametrize("cls, state, needles", [
    (StateOfTwo, True, ["port 'y'", "state=True", "continuous_state() must have 1 "
                        "element(s), its shape ()", "it has 2"]),
    (StateOfTwo, slice(0, 2), ["port 'y'", "state=slice(0, 2, None)", "selects 2 of the 2",
                               "needs 1"]),
    (StateOfTwo, 1, ["port 'y'", "state= must be True or a slice of the state, got 1"]),
    (WatchesNothing, None, ["rates names 'v', not an input of the block (inputs: u)"]),
])
def test_plugin_contract_mistakes_are_diagram_errors(registry, tmp_path, capsys, monkeypatch,
                                                     cls, state, needles):
    """A block that breaks the contract is refused with exit 2 at its line, naming the block,
    the port and the rule (docs/custom-blocks.md), never a traceback."""
    monkeypatch.setattr(sys.modules[__name__], "STATE", state)
    blocksim.register_block(type(cls.__name__, (cls,), {}), name="faulty")
    refused_at_block_d(write(tmp_path, DIAGRAM % "faulty"), tmp_path, capsys,
                       [*needles, "custom-blocks.md"])


@pytest.mark.parametrize("text, needles", [
    ("2 * v", ["output y '2 * v': unknown name 'v'"]),
    ("[u, u]", ["output y '[u, u]': its value has shape (2,), its target ()"]),
    ("norm(u)", ["output y 'norm(u)': norm() has no in-place form"]),
    ("2 * u +", ["output y '2 * u +': syntax error"]),
])
def test_a_mistake_in_a_behaviour_is_the_blocks_error(registry, tmp_path, capsys, text,
                                                      needles):
    """A behaviour's text that cannot be the block's method (an unknown name, another
    shape, a function the in-place programs do not take, a syntax error) is refused with
    exit 2 at the block's line, naming the block and the text, never a traceback."""
    blocksim.register_block(type("Twice", (Doubler,), {"behaviour": Behaviour(
        outputs={"y": text}), "output": Block.output}), name="twice")
    refused_at_block_d(write(tmp_path, DIAGRAM % "twice"), tmp_path, capsys, needles)


class RaisesInInit(Doubler):
    def __init__(self, name, params):
        raise RuntimeError("no licence server")


class RaisesInPorts(Doubler):
    def ports(self):
        raise ValueError("ports from a file that is missing")


class NoPorts(Block):
    """Forgot to define ports()."""


class PortsNotAPair(Doubler):
    def ports(self):
        return None


@pytest.mark.parametrize("cls, words", [
    (RaisesInInit, "failed while being built: RuntimeError: no licence server"),
    (RaisesInPorts, "failed in ports(): ValueError: ports from a file that is missing"),
    (NoPorts, "defines no ports()"),
    (PortsNotAPair, "ports() must return ([In, ...], [Out, ...]), got None"),
])
def test_a_plugin_block_that_fails_to_build_is_an_error_at_its_block(registry, tmp_path,
                                                                      capsys, cls, words):
    blocksim.register_block(type(cls.__name__, (cls,), {}), name="flaky")
    path = write(tmp_path, DIAGRAM % "flaky")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: error: block 'D': plugin block type 'flaky'" in err, err
    assert words in err and "Traceback" not in err, err


WITH_PLUGIN = """\
import sys
from blocksim.language import library
library._discovered = {{"flaky": ("{module}:Flaky", "flaky-blocks")}}  # as if installed
from blocksim.cli import main
sys.exit(main({argv!r}))
"""


def with_plugin(tmp_path, module, body, argv):
    """`blocksim ARGV` in a process of its own where the plugin type 'flaky' is installed
    from `module`, whose import runs `body`."""
    (tmp_path / f"{module}.py").write_text(body)
    script = WITH_PLUGIN.format(module=module, argv=argv)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


@pytest.mark.parametrize("module, body, words", [
    ("plugin_fatal", "class Fatal(BaseException):\n    pass\nraise Fatal('gone')\n",
     "Fatal: gone"),
    ("plugin_exits", "import sys\nsys.exit(0)\n", "SystemExit: 0"),
    # issue 35 item 5: a KeyboardInterrupt the import raises itself (no Ctrl-C) was exit 130
    ("plugin_interrupts", "raise KeyboardInterrupt\n", "KeyboardInterrupt\n"),
])
def test_a_plugin_whose_import_raises_anything_is_an_error(tmp_path, module, body, words):
    # a BaseException (not an Exception) escaped the loader as a traceback, and sys.exit at
    # import ended `blocksim run` silently with exit 0 and nothing written
    path = write(tmp_path, DIAGRAM % "flaky")
    proc = with_plugin(tmp_path, module, body, ["run", str(path), "--out", str(tmp_path / "o")])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{path}:4: error: block 'D': plugin block type 'flaky' from flaky-blocks" \
        in proc.stderr and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("body, words", [
    ("import sys\nsys.exit()\n", "could not be loaded: SystemExit\n"),
    ("raise KeyboardInterrupt\n", "could not be loaded: KeyboardInterrupt\n"),
])
def test_the_catalogue_lists_the_built_ins_and_names_a_plugin_that_failed(tmp_path, body,
                                                                           words):
    """issue 35 item 5: `blocksim blocks` with a plugin whose import raised KeyboardInterrupt
    printed 'interrupted' (exit 130) and no catalogue."""
    proc = with_plugin(tmp_path, "plugin_stops", body, ["blocks"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "warning: plugin block type 'flaky' from flaky-blocks " \
                          "(plugin_stops:Flaky) " + words
    assert "\n  gain " in proc.stdout and "flaky" not in proc.stdout


def test_ctrl_c_while_a_plugin_is_imported_is_the_users(tmp_path):
    """A SIGINT (what Ctrl-C sends, here sent by the import itself) still interrupts."""
    proc = with_plugin(tmp_path, "plugin_sigint",
                       "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n", ["blocks"])
    assert proc.returncode == 130 and proc.stderr == "interrupted\n", proc.stderr
