"""Sweeps whose varied paths are numbers of P alone (batch/columns.py): their values are
checked by their parameters' rules and written into the batch's P rows all at once, with no
run taking the route of new values; every row, metric and kept result is what a run of the
diagram with those values gives on its own (blocksim.execute), bit for bit, in both modes.
And uniform draws of every run at once (batch/draws.py) against each run's own generator."""
from pathlib import Path

import numpy as np
import pytest

import blocksim
from blocksim.accel import batch
from blocksim.batch import columns, draws, run, spec
from blocksim.batch.run import prepare
from blocksim.batch.spec import parse_distribution
from blocksim.errors import DiagramErrors
from blocksim.params import Param

MSD = Path(__file__).resolve().parents[2] / "diagrams" / "msd.yaml"

GRID = f"""blocksim-sweep: 1
diagram: {MSD}
set:
  simulation.stop: 6
grid:
  blocks.Spring.K: [1, 10]
  blocks.Damping.K: VALUES
metrics:
  peak: max(x)
  last: v[-1]
"""


def recorded(monkeypatch, owner, name):
    """The list of the argument each call of the method `owner.name` is given from now on
    (the method still runs)."""
    calls = []
    method = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda self, arg: calls.append(arg) or method(self, arg))
    return calls


def test_a_grid_of_numbers_of_P_runs_as_each_value_alone(tmp_path, monkeypatch):
    routed = recorded(monkeypatch, batch.CompiledRuns, "args")  # runs taking the route
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("VALUES", "[0.2, 0.9]"))
    out = tmp_path / "out"
    table = prepare(path, overrides=["simulation.mode=accelerated"]).run(workers=2, out=out)
    assert not routed  # no run took the route: the rows were filled at once
    assert table.meta["execution"]["modes"] == {"accelerated": 4}
    for i, row in enumerate(table.rows):
        values = {"simulation.stop": 6, "blocks.Spring.K": row["blocks.Spring.K"],
                  "blocks.Damping.K": row["blocks.Damping.K"]}
        # the truth: each grid point run alone, in either mode
        alone = {mode: blocksim.execute(blocksim.load(MSD, {**values,
                                                            "simulation.mode": mode}))
                 for mode in ("accelerated", "normal")}
        kept = np.load(out / "runs" / str(i) / "results.npz")
        for result in alone.values():
            assert row["status"] == "ok" and row["steps"] == result.meta["solver"]["nsteps"]
            assert row["peak"] == np.max(result["x"]) and row["last"] == result["v"][-1]
            for name in ("t", "x", "v", "F"):
                np.testing.assert_array_equal(kept[name], result[name], err_msg=name)


def test_a_grid_value_the_rules_refuse_is_reported_as_the_route_reports_it(tmp_path):
    """The message is the one main gave at 1921991 (each value checked on the route)."""
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("VALUES", "[0.2, .inf, 0.5, .nan]"))
    with pytest.raises(DiagramErrors) as e:
        prepare(path)
    assert [str(x) for x in e.value.errors] == [
        f"{path}:7: error: block 'Damping' parameter 'K': value must be finite",
        f"{path}:7: error: block 'Damping' parameter 'K': value is not a number (NaN)"]


def test_values_refused_alike_are_one_line_naming_the_first_and_how_many(tmp_path):
    """[.inf, -.inf] gave one 'value must be finite' line naming neither value (the first
    run was refused and the other values were not checked), and the same words for another
    path at another line were left out as said already."""
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("[1, 10]", "[1, .inf]").replace(
        "VALUES", "[.inf, 0.5, -.inf, .nan, .inf]"))
    with pytest.raises(DiagramErrors) as e:
        prepare(path)
    # by hand from the lists: Damping's inf, -inf, inf refused as not finite, its nan as
    # not a number; Spring's inf alone
    assert [str(x) for x in e.value.errors] == [
        f"{path}:7: error: block 'Damping' parameter 'K': value must be finite: the listed "
        "inf and 2 more",
        f"{path}:6: error: block 'Spring' parameter 'K': value must be finite",
        f"{path}:7: error: block 'Damping' parameter 'K': value is not a number (NaN)"]


def test_runs_reported_a_batch_at_once_are_the_rows_reported_one_by_one(tmp_path,
                                                                         monkeypatch):
    """Runs that ended ok, every metric computed at once and nothing kept, are taken into
    the table a stretch at once (worker.Outcomes), with a progress callback too (taking
    them run by run made a 40,000-run grid's own time 4.18 s instead of 2.26 s), which then
    sees each run, one call each as documented (each call counting one run more). Both give
    the same rows and the same summary.csv but for the times, and each row is its value run
    alone (blocksim.execute)."""
    one_run = recorded(monkeypatch, run._Writer, "took")  # runs recorded one by one
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("VALUES", "[0.2, 0.5, 0.9]"))
    seen = []
    tables = {how: prepare(path, overrides=["simulation.mode=accelerated"]).run(
        workers=1, keep="metrics", out=tmp_path / how, progress=progress)
        for how, progress in (("at once", None), ("one by one", seen.append))}
    # each sweep's first run alone (it made the compiled code), the batch after it at once,
    # with the callback too
    assert [outcome.index for outcome in one_run] == [0, 0]
    assert [(p.done, p.ok) for p in seen] == [(k, k) for k in range(7)]
    assert [p.outcome.index for p in seen[1:]] == list(range(6))
    at_once, one_by_one = (tables[how] for how in ("at once", "one by one"))
    assert at_once.meta["execution"]["modes"] == {"accelerated": 6}
    for key in ("modes", "compiles", "reparameterised"):
        assert at_once.meta["execution"][key] == one_by_one.meta["execution"][key]
    times = at_once.columns.index("wall_s")

    def cells(how):
        lines = (tmp_path / how / "summary.csv").read_text().splitlines()
        return [line.split(",")[:times] + line.split(",")[times + 1:] for line in lines]
    assert cells("at once") == cells("one by one")
    for a, b in zip(at_once.rows, one_by_one.rows):
        assert {k: v for k, v in a.items() if k != "wall_s"} == \
            {k: v for k, v in b.items() if k != "wall_s"}
        alone = blocksim.execute(blocksim.load(MSD, {
            "simulation.stop": 6, "simulation.mode": "accelerated",
            "blocks.Spring.K": a["blocks.Spring.K"], "blocks.Damping.K": a["blocks.Damping.K"]}))
        assert a["status"] == "ok" and a["steps"] == alone.meta["solver"]["nsteps"]
        assert a["peak"] == np.max(alone["x"]) and a["last"] == alone["v"][-1]
    assert not (tmp_path / "at once" / "runs").exists()


def test_a_stretch_of_values_the_rules_refuse_does_not_end_the_batches(tmp_path, monkeypatch):
    """The first batch's values all refused by the rules at once (a stand-in rule: K < 5)
    go the general way, and the runs after them still run in batches (the batches ended
    there: the rest of the sweep was left not run)."""
    refused = Param.refused
    monkeypatch.setattr(Param, "refused", lambda self, values: refused(self, values) | (
        (values < 5) if self.name == "K" else False))
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("  blocks.Spring.K: [1, 10]\n", "").replace(
        "blocks.Damping.K: VALUES", "blocks.Damping.K: [1, 2, 3, 4, 5, 6, 7, 8]"))
    table = prepare(path, overrides=["simulation.mode=accelerated"]).run(workers=1,
                                                                         keep="metrics")
    assert table.counts()["ok"] == 8
    for row in table.rows:  # the truth: each value run alone
        alone = blocksim.execute(blocksim.load(MSD, {
            "simulation.stop": 6, "simulation.mode": "accelerated",
            "blocks.Damping.K": row["blocks.Damping.K"]}))
        assert row["peak"] == np.max(alone["x"])


NOISY = """blocksim: 1
name: noisy
blocks:
  N: {type: noise, power: 0.5, period: 0.05, seed: 3}
  R: {type: random, period: 0.1, seed: 4}
  Beat: {type: pulse, period: 0.4, width: 0.5}
  G: {type: gain, K: 2}
  S: {type: sum, signs: "+++"}
  I: {type: integrator}
wires: [N -> S.u1, R -> S.u2, Beat -> S.u3, S -> G, G -> I]
simulation: {stop: 2, solver: rk45}
record: {i: I.y}
"""


def test_runs_filled_at_once_share_the_models_data_arrays_and_events(tmp_path, monkeypatch):
    """A grid of a gain's K over noise (per-run data arrays: the draws) and a pulse (time
    events): the batches hand every run the model's arrays and events; each row is what
    normal mode gives for its value (the truth: the sweep run in normal mode)."""
    routed = recorded(monkeypatch, batch.CompiledRuns, "args")  # runs taking the route
    (tmp_path / "noisy.yaml").write_text(NOISY)
    path = tmp_path / "grid.yaml"
    path.write_text("blocksim-sweep: 1\ndiagram: noisy.yaml\ngrid: {blocks.G.K: "
                    "'linspace(1, 5, 24)'}\nmetrics: {m: 'max(i)', f: 'final(i)'}\n")
    rows = {mode: [(r["status"], r["steps"], r["m"], r["f"]) for r in prepare(
        path, overrides=[f"simulation.mode={mode}"]).run(workers=workers, keep="metrics").rows]
        for mode, workers in (("accelerated", 2), ("normal", 1))}
    assert not routed  # every run's P row was filled at once
    assert rows["accelerated"] == rows["normal"]
    assert {status for status, *_ in rows["normal"]} == {"ok"}


def test_a_metric_not_computed_at_once_reads_every_signal(tmp_path):
    """max(1) has no row per recorded time: the batch's metrics are then computed run by run
    from every signal's rows, which the batch reads again in whole (it read only t and x,
    all its metrics read); the rows are normal mode's (the truth: the sweep in normal
    mode)."""
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("VALUES", "[0.2, 0.9]").replace(
        "last: v[-1]", "odd: max(x) + max(1)"))
    rows = {mode: [{k: v for k, v in r.items() if k != "wall_s"} for r in prepare(
        path, overrides=[f"simulation.mode={mode}"]).run(workers=1, keep="metrics").rows]
        for mode in ("accelerated", "normal")}
    assert rows["accelerated"] == rows["normal"]
    assert [r["status"] for r in rows["normal"]] == ["ok"] * 4


def test_a_value_read_by_values_changed_is_neither_direct_nor_tunable(monkeypatch):
    """One answer (rundata.not_as_given) for a sweep's columns and an export's tunables: a
    gain whose values_changed made something of K in Python is refused by both (export
    made k tunable before: it traced no values_changed; the sweep refused every parameter
    of a type defining it)."""
    from blocksim.accel.tunable import tunables
    from blocks.math import Gain
    monkeypatch.setattr(Gain, "values_changed", lambda self: self.p.K, raising=False)
    model = blocksim.load(MSD)
    assert columns.direct(model, "blocks.Spring.K") is None
    assert columns.direct(model, "blocks.Damping.K") is None
    found = tunables(model)
    assert "k" not in [p.name for p in found.parameters]
    assert ("k", "block Spring (gain) computes what it keeps made from its values "
                 "(values_changed) from K in Python") in found.refused


def test_a_step_level_is_direct_and_runs_as_each_value_alone(tmp_path, monkeypatch):
    """The step's events read its time, not its levels: `after` is a number of P alone
    (taken by the route before, its type defining events), and the rows filled at once
    equal each value run alone (the truth: blocksim.execute with the value set)."""
    routed = recorded(monkeypatch, batch.CompiledRuns, "args")  # runs taking the route
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.replace("  blocks.Spring.K: [1, 10]\n", "").replace(
        "blocks.Damping.K: VALUES", "blocks.Force.after: [0.5, 2]"))
    out = tmp_path / "out"
    table = prepare(path, overrides=["simulation.mode=accelerated"]).run(workers=1, out=out)
    assert not routed
    for i, row in enumerate(table.rows):
        values = {"simulation.stop": 6, "simulation.mode": "accelerated",
                  "blocks.Force.after": row["blocks.Force.after"]}
        alone = blocksim.execute(blocksim.load(MSD, values))
        kept = np.load(out / "runs" / str(i) / "results.npz")
        for name in ("t", "x", "F"):
            np.testing.assert_array_equal(kept[name], alone[name], err_msg=name)


def test_a_threshold_a_declared_check_reads_takes_the_route():
    """A saturation's limits are read by no Python, but its check (upper >= lower) must
    see each new value: they take the route, which checks it (rundata.py, d.check)."""
    model = blocksim.load(Path(__file__).resolve().parents[1] / "accel" / "corpus" /
                          "grid_at_event.yaml")
    assert [columns.direct(model, f"blocks.Sat.{q}") for q in ("lower", "upper")] == [None] * 2


_RULE_VALUES = [0.0, -0.0, 1.0, -1.5, -1.6, 3e300, -np.inf, np.inf, np.nan, 1e-300]


@pytest.mark.parametrize("param, expected", [
    # by hand from each declaration: NaN always, +-inf unless allowed, > 0, >= minimum
    (Param("K"), [0, 0, 0, 0, 0, 0, 1, 1, 1, 0]),
    (Param("K", "scalar", positive=True), [1, 1, 0, 1, 1, 0, 1, 1, 1, 0]),
    (Param("K", minimum=-1.5), [0, 0, 0, 0, 1, 0, 1, 1, 1, 0]),
    (Param("K", "scalar", allow_inf=True, minimum=0.0), [0, 0, 0, 1, 1, 0, 1, 0, 1, 0])],
    ids=["value", "positive", "minimum", "inf allowed"])
def test_the_rules_at_once_are_each_values_convert(param, expected):
    """A grid's mask (Param.refused) refuses what Param.convert refuses, value by value."""
    values = np.array(_RULE_VALUES)

    def convert_refuses(v):
        try:
            param.convert(float(v))
        except ValueError:
            return True
        return False
    np.testing.assert_array_equal(param.refused(values), np.array(expected, bool))
    assert [convert_refuses(v) for v in values] == [bool(b) for b in expected]


@pytest.mark.parametrize("seed", [0, 7, 2**64 + 5, 2**130 + 1])
def test_every_runs_uniform_draws_at_once_are_its_own_generators(seed):
    """The truth: numpy's generator of each run, made and drawn from one by one."""
    dists = [("a", parse_distribution("uniform(1, 10)")),
             ("b", parse_distribution("uniform(-0.5, 0.25)"))]
    runs = np.array([0, 1, 2, 150, 299, 2**32 - 1])
    found = draws.uniform_draws(seed, dists, runs)
    for k, i in enumerate(runs.tolist()):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,)))
        assert (found["a"][k], found["b"][k]) == (rng.uniform(1, 10), rng.uniform(-0.5, 0.25))
    normal = [("a", parse_distribution("normal(0, 1)"))]
    assert draws.uniform_draws(seed, normal, np.arange(3)) is None  # drawn run by run


@pytest.mark.parametrize("second, draw", [
    ("uniform(0.2, 1)", lambda rng: rng.uniform(0.2, 1)),
    ("normal(0.5, 0.1)", lambda rng: rng.normal(0.5, 0.1))])
def test_draws_made_a_block_at_a_time_are_each_runs_own_generators(tmp_path, monkeypatch,
                                                                   second, draw):
    """Runs asked for out of order, across blocks of 3 runs (the draws of a block made when
    one of its runs is first asked for), with draws made at once (uniform) and run by run
    (normal). The truth: numpy's generator of each run, drawn from in the order written."""
    monkeypatch.setattr(spec, "DRAW_BLOCK", 3)
    path = tmp_path / "mc.yaml"
    path.write_text(f"blocksim-sweep: 1\ndiagram: {MSD}\nsamples: 10\nseed: 11\nrandom:\n"
                    f"  blocks.Spring.K: uniform(1, 10)\n  blocks.Damping.K: '{second}'\n"
                    "metrics: {peak: max(x)}\n")
    runs = prepare(path).plan.runs()
    truth = []
    for i in range(10):
        rng = np.random.default_rng(np.random.SeedSequence(11, spawn_key=(i,)))
        truth.append((rng.uniform(1, 10), draw(rng)))
    keys = ["blocks.Spring.K", "blocks.Damping.K"]
    assert runs.numbers(keys, np.array([7, 1])).tolist() == [list(truth[7]), list(truth[1])]
    assert [runs[4].values[k] for k in keys] == list(truth[4])
    assert runs.column("blocks.Damping.K", np.arange(10)) == [t[1] for t in truth]
