"""Engine features end to end: subsystems, --set, check, blocks, run directory, API."""
import json
import math

import numpy as np
import pytest

import blocksim
from blocksim.cli import main

LAG_SUB = """
blocksim: 1
name: lag
parameters: {tau: 1.0}
blocks:
  S: {type: sum, signs: "+-"}
  G: {type: gain, K: 1/tau}
  I: {type: integrator}
wires: [S -> G, G -> I, I -> S.u2]
inputs: {u: S.u1}
outputs: {y: I.y}
simulation: {stop: 99}
record: {ignored: I.y}
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_file_subsystem_flattens_and_takes_parameters(tmp_path):
    write(tmp_path, "lag.yaml", LAG_SUB)
    path = write(tmp_path, "top.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: 2}
  F: {type: subsystem, file: lag.yaml, parameters: {tau: 0.5}}
  H: {type: subsystem, file: lag.yaml}
wires: [U -> F.u, F.y -> H]
simulation: {stop: 3, output_interval: 0.5, rtol: 1e-10, atol: 1e-12}
record: {y: F/I.y, z: H/I.y}
""")
    r = blocksim.run(path)
    # first-order lag tau*y' = u - y, y(0) = 0, u = 2: y = 2 (1 - exp(-t/tau)), tau = 0.5
    np.testing.assert_allclose(r["y"], 2 * (1 - np.exp(-r.t / 0.5)), atol=1e-8)
    # the second lag (tau = 1, the file's default) driven by the first: for a cascade of
    # lags with time constants a = 0.5, b = 1 and input 2:
    # z = 2 [1 - (a e^{-t/a} - b e^{-t/b}) / (a - b)]
    a, b = 0.5, 1.0
    exact = 2 * (1 - (a * np.exp(-r.t / a) - b * np.exp(-r.t / b)) / (a - b))
    np.testing.assert_allclose(r["z"], exact, atol=1e-8)
    assert "ignored" not in r  # an included file's record: is ignored
    model = blocksim.load(path)
    assert {b.name for b in model.blocks} >= {"F/S", "F/G", "F/I", "H/I"}


def test_inline_subsystem_and_set_on_inner_block(tmp_path):
    path = write(tmp_path, "top.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: 1}
  Sub:
    type: subsystem
    diagram:
      blocks:
        K: {type: gain, K: 3}
      inputs: {x: K.u}
      outputs: {y: K.y}
  T: {type: terminator}
wires: [U -> Sub.x, Sub -> T]
simulation: {stop: 1}
record: {y: Sub/K.y}
""")
    assert blocksim.run(path)["y"][-1] == 3.0
    r = blocksim.run(path, overrides=["blocks.Sub/K.K=5"])
    assert r["y"][-1] == 5.0


def test_set_overrides_by_dotted_path(tmp_path):
    path = write(tmp_path, "d.yaml", """
blocksim: 1
parameters: {k: 2}
blocks:
  U: {type: constant, value: k}
  I: {type: integrator}
wires: [U -> I]
simulation: {stop: 1}
record: {x: I.y}
""")
    r = blocksim.run(path, overrides=["parameters.k=3", "simulation.stop=2",
                                      "simulation.output_interval=0.5", "simulation.rtol=1e-8"])
    np.testing.assert_array_equal(r.t, [0, 0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(r["x"], 3 * r.t)  # x' = k
    assert r.meta["configuration"]["simulation"]["rtol"] == 1e-8
    r = blocksim.run(path, overrides={"blocks.U.value": "[1, 2]", "blocks.I.x0": [0, 0]})
    assert r["x"].shape == (len(r.t), 2)


def test_output_interval_grid_snaps_and_ends_at_stop(tmp_path):
    path = write(tmp_path, "d.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: 1}
  I: {type: integrator}
wires: [U -> I]
simulation: {stop: 1, output_interval: 0.3}
record: {x: I.y}
""")
    r = blocksim.run(path)
    # start + k*interval, then the end time itself (not on the grid)
    np.testing.assert_array_equal(r.t, [0.0, 0.3, 0.6, 0.8999999999999999, 1.0])
    path2 = write(tmp_path, "e.yaml", path.read_text().replace("0.3", "0.1"))
    r = blocksim.run(path2)
    assert len(r.t) == 11 and r.t[-1] == 1.0 and np.all(np.diff(r.t) > 0)


def test_slices_on_wires_and_records(tmp_path):
    path = write(tmp_path, "d.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: [1, 2, 3, 4]}
  G: {type: gain, K: 10}
  T: {type: terminator}
wires:
  - U[1:3] -> G
  - G -> T
simulation: {stop: 1}
record:
  g: G.y
  last: U.y[-1]
""")
    r = blocksim.run(path)
    np.testing.assert_array_equal(r["g"][-1], [20, 30])
    assert r["last"].shape == (len(r.t),) and r["last"][-1] == 4


def test_cli_run_writes_run_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "osc.yaml", """
blocksim: 1
name: osc
blocks:
  V: {type: integrator, x0: 1}
  X: {type: integrator}
  G: {type: gain, K: -1}
  Scope: {type: scope, inputs: 2}
wires: [V -> X, X -> G, G -> V, X -> Scope.u1, V -> Scope.u2]
simulation: {stop: 6.283185307179586, solver: dop853, rtol: 1e-10, atol: 1e-12}
record: {x: X.y, v: V.y}
""")
    assert main(["run", str(path), "--quiet"]) == 0
    out = tmp_path / "runs" / "osc"
    res = np.load(out / "results.npz")
    meta = json.loads((out / "meta.json").read_text())
    assert (out / "Scope.png").stat().st_size > 1000
    # x = sin t, v = cos t; one period later back at (0, 1)
    assert res["x"][-1] == pytest.approx(0, abs=1e-8) and res["v"][-1] == pytest.approx(1, abs=1e-8)
    assert meta["complete"] is True and meta["name"] == "osc"
    assert meta["solver"]["name"] == "dop853" and meta["solver"]["nfev"] > 0
    assert "numpy" in meta["versions"] and meta["configuration"]["blocks"]["G"]["K"] == -1
    assert not list(out.glob(".*")), "no temporary files left behind"
    assert main(["run", str(path), "--quiet", "--no-plots", "--out", str(tmp_path / "np"),
                 "--stop", "1", "--solver", "rk4"]) == 0
    assert not (tmp_path / "np" / "Scope.png").exists()
    meta = json.loads((tmp_path / "np" / "meta.json").read_text())
    assert meta["solver"]["name"] == "rk4" and meta["end_time"] == 1.0


def test_check_explains_the_diagram(tmp_path, capsys):
    path = write(tmp_path, "d.yaml", """
blocksim: 1
blocks:
  C: {type: clock}
  Z: {type: zoh, period: 0.1}
  K: {type: constant, value: [1, 2]}
  G: {type: gain, K: 2}
  I: {type: integrator, x0: [0, 0]}
wires: [C -> Z, K -> G, G -> I]
simulation: {stop: 1}
""")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 continuous states" in out and "discrete 0.1 s" in out
    assert "execution order" in out and "G.y" in out and "[constant]" in out
    assert out.index("C.t") < out.index("Z.y")  # dataflow order


INHERITED = """
blocksim: 1
blocks:
  S: {type: sine}
  Z: {type: zoh, period: 0.1}
  G: {type: gain, K: 2}
  F: {type: function, expr: "u**2"}
  K: {type: constant, value: 3}
  P: {type: sum, signs: "++"}
  St: {type: step}
  Mix: {type: sum, signs: "++"}
  I: {type: integrator}
wires: [S -> Z, Z -> G, G -> F, F -> P.u1, K -> P.u2, P -> Mix.u1, St -> Mix.u2, Mix -> I]
simulation: {stop: 1, output_interval: 0.05}
record: {p: P.y}
"""


def test_check_shows_rates_inherited_from_a_zoh_and_modes(tmp_path, capsys):
    """Issue 23 item 12: blocks fed only by a zoh (and constants) inherit its rate, as in
    Simulink, and are computed only at its hits; a block fed by a continuous signal too
    stays continuous. A step's switch is a mode, not a discrete state."""
    path = write(tmp_path, "d.yaml", INHERITED)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()
            if line.startswith("  ") and len(line.split()) > 2}
    for name in ("G", "F", "P"):
        assert "discrete 0.1 s (inherited)" in rows[name], rows[name]
    assert "continuous" in rows["Mix"] and "inherited" not in rows["Mix"]
    assert "states: 1 mode (changed at events)" in rows["St"]
    assert "discrete" not in rows["St"]
    assert "1 continuous state, 1 discrete state, 1 mode" in out
    order = {line.split()[1]: line.split()[2] for line in out.splitlines()
             if line.strip()[:1].isdigit() and "[" in line}
    assert order["G.y"] == order["F.y"] == order["P.y"] == "[discrete]"
    assert order["Mix.y"] == "[continuous]"


def test_inherited_rate_blocks_are_computed_only_at_hits(tmp_path):
    """The same values as before (u = sin(0.1 k) held, squared twice, plus 3), from one
    computation per hit: the function block is called 11 times (hits at 0, 0.1, ..., 1),
    not at every solver evaluation."""
    calls = []
    path = write(tmp_path, "d.yaml", INHERITED)
    model = blocksim.load(path)
    block = next(b for b in model.blocks if b.name == "F")
    original = block.output

    def counted(t):
        calls.append(t)
        original(t)
    block.output = counted
    result = blocksim.run(model)
    k = np.floor(result.t / 0.1 + 1e-9)
    np.testing.assert_allclose(result["p"], (2 * np.sin(0.1 * k)) ** 2 + 3, rtol=1e-15)
    assert sorted(set(calls)) == pytest.approx([0.1 * j for j in range(11)], abs=1e-12)


def test_blocks_catalogue_and_one_block(capsys):
    assert main(["blocks"]) == 0
    out = capsys.readouterr().out
    for name in ("gain", "integrator", "zoh", "scope", "transfer_function"):
        assert name in out
    assert main(["blocks", "gain"]) == 0
    out = capsys.readouterr().out
    assert "K @ u" in out and "parameters:" in out
    assert main(["blocks", "gian"]) == 2
    assert "did you mean 'gain'" in capsys.readouterr().err


def test_every_catalogued_block_has_a_docstring_listing_its_parameters():
    from blocksim.language.library import Library
    lib = Library()
    for name in lib.types:
        cls = lib.block_class(name)
        assert cls.type == name
        assert cls.__doc__ and len(cls.__doc__.strip()) > 20, name
        for p in cls.params:
            assert p.doc or p.name in cls.__doc__, (name, p.name)


def test_load_does_not_simulate_and_run_writes_only_with_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "d.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: 1}
  Scope: {type: scope}
wires: [U -> Scope]
simulation: {stop: 1}
""")
    model = blocksim.load(path)
    assert model.settings.stop == 1 and len(model.blocks) == 2
    blocksim.run(path, plots=True)
    assert list(tmp_path.iterdir()) == [path]


def test_step_switch_is_landed_exactly_by_fixed_step_solver(tmp_path):
    path = write(tmp_path, "d.yaml", """
blocksim: 1
blocks:
  S: {type: step, time: 0.55}
  I: {type: integrator}
wires: [S -> I]
simulation: {stop: 1, solver: euler, step: 0.1}
record: {x: I.y}
""")
    r = blocksim.run(path)
    assert 0.55 in r.t
    # x = max(0, t - 0.55): Euler is exact for a piecewise-constant right-hand side
    # when the switch is landed on
    np.testing.assert_allclose(r["x"], np.maximum(0, r.t - 0.55), atol=1e-12)
    assert math.isclose(r.t[-1], 1.0)


def test_record_names_a_subsystem_output(tmp_path):
    """record: (and --set record.X) may name a subsystem's own output port, also through a
    nested subsystem; the value is that of the inner port it exposes (issue 16 item 4)."""
    write(tmp_path, "lag.yaml", LAG_SUB)
    path = write(tmp_path, "top.yaml", """
blocksim: 1
blocks:
  U: {type: constant, value: 2}
  Lag: {type: subsystem, file: lag.yaml, parameters: {tau: 0.5}}
  Outer:
    type: subsystem
    diagram:
      blocks:
        Inner: {type: subsystem, file: lag.yaml}
      inputs: {u: Inner.u}
      outputs: {y: Inner}
wires: [U -> Lag, Lag.y -> Outer]
simulation: {stop: 2, output_interval: 0.5}
record: {y: Lag.y, y_inner: Lag/I.y, z: Outer.y, z_inner: Outer/Inner/I.y}
""")
    r = blocksim.run(path, overrides=["record.w=Outer"])
    np.testing.assert_array_equal(r["y"], r["y_inner"])
    np.testing.assert_array_equal(r["z"], r["z_inner"])
    np.testing.assert_array_equal(r["w"], r["z_inner"])
    np.testing.assert_allclose(r["y"], 2 * (1 - np.exp(-r.t / 0.5)), atol=1e-3)


def test_blocks_switching_at_the_same_time(tmp_path):
    """Two tables with the same breakpoints announce the same switch times (the compiler
    used to compare the blocks to order them: TypeError, exit 1). Their sum is the
    piecewise-linear interpolant of the summed values (issue 16 item 5)."""
    path = write(tmp_path, "tables.yaml", """
blocksim: 1
blocks:
  T1: {type: table, times: [0, 1, 2], values: [0, 1, 0]}
  T2: {type: table, times: [0, 1, 2], values: [0, 2, 0]}
  S: {type: step, time: 1, after: 10}
  Sum: {type: sum, signs: "+++"}
wires: [T1 -> Sum.u1, T2 -> Sum.u2, S -> Sum.u3]
simulation: {stop: 3, output_interval: 0.25}
record: {y: Sum.y}
""")
    r = blocksim.run(path)
    expected = np.interp(r.t, [0, 1, 2], [0, 3, 0]) + np.where(r.t >= 1, 10, 0)
    np.testing.assert_allclose(r["y"], expected, atol=1e-12)


@pytest.mark.parametrize("name, directory", [("42", "42"), ("1.5", "1.5")])
def test_numeric_name_names_the_run_directory(tmp_path, monkeypatch, capsys, name, directory):
    """`name: 42` is read as a number by YAML; it names runs/42/ (issue 16 item 6)."""
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "d.yaml", f"blocksim: 1\nname: {name}\n"
                 "blocks: {A: {type: constant, value: 1}}\nsimulation: {stop: 1}\n")
    assert main(["run", str(path), "--quiet"]) == 0, capsys.readouterr().err
    meta = json.loads((tmp_path / "runs" / directory / "meta.json").read_text())
    assert meta["name"] == directory


def test_meta_json_keeps_the_wires_indices(tmp_path):
    """The resolved configuration in meta.json writes each wire as the diagram did, with its
    element or slice: `C[1] -> G` is not the wire `C -> G` (which would not even compile)."""
    path = write(tmp_path, "idx.yaml", """
blocksim: 1
blocks:
  C: {type: constant, value: [1, 2, 3]}
  G: {type: gain, K: 2}
  H: {type: gain, K: 3}
  M: {type: mux, inputs: 2}
wires: ["C[1] -> G", "C[0:2] -> H", "C[:1] -> M.u1", "C[-1] -> M.u2"]
simulation: {stop: 1}
""")
    result = blocksim.run(path, out=tmp_path / "out")
    wires = ["C[1] -> G", "C[0:2] -> H", "C[:1] -> M.u1", "C[-1] -> M.u2"]
    assert result.meta["configuration"]["wires"] == wires
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["configuration"]["wires"] == wires


def test_python_overrides_take_numpy_values(tmp_path):
    """blocksim.run(..., overrides=) takes numpy arrays and scalars, as a numpy user writes
    them; meta.json records them as plain lists."""
    path = write(tmp_path, "k.yaml", """
blocksim: 1
blocks:
  V: {type: constant, value: [1, 1]}
  K: {type: gain, K: 1}
wires: [V -> K]
simulation: {stop: 1}
record: {y: K.y}
""")
    r = blocksim.run(path, overrides={"blocks.K.K": np.array([[2, 0], [1, 3]]),
                                      "simulation.stop": np.float64(0.5)},
                     out=tmp_path / "out")
    np.testing.assert_array_equal(r["y"][-1], [2, 4])  # [[2, 0], [1, 3]] @ [1, 1]
    assert r.t[-1] == 0.5
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["configuration"]["blocks"]["K"]["K"] == [[2, 0], [1, 3]]
