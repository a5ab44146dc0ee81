"""The n-D lookup table against scipy.interpolate.RegularGridInterpolator (a second
implementation: linear, nearest, cubic; clipped and extrapolated), the same table read from
CSV and NPZ files, and its load-time checks through the command line (FILE:LINE)."""
import numpy as np
import pytest
from harness import Rig
from scipy.interpolate import RegularGridInterpolator
from scipy.sparse.linalg import spsolve

import blocksim
from blocks.lookup_nd import LookupND

GRID = (np.array([-1.0, 0.0, 0.5, 2.0]), np.array([-2.0, -1.0, 0.0, 1.5, 2.0]),
        np.array([0.0, 0.5, 1.0, 3.0]))
TABLE = np.random.default_rng(3).uniform(-2.0, 2.0, (4, 5, 4))
# points inside, on breakpoints, and outside the box on both sides of every dimension
POINTS = np.vstack([np.random.default_rng(4).uniform([-2, -3, -1], [3, 3, 4], (60, 3)),
                    [[0.0, -1.0, 0.5], [2.0, 2.0, 3.0], [-1.0, -2.0, 0.0]]])


def lookup(n, points, **params):
    """The block over the first n dimensions at `points` (k, n): each input a vector."""
    k = len(points)
    rig = Rig(LookupND, {"breakpoints": list(GRID[:n]), "table": TABLE[(slice(None),) * n
                                                                        + (0,) * (3 - n)],
                         **params}, {f"u{d + 1}": (k,) for d in range(n)})
    return rig.set(**{f"u{d + 1}": points[:, d] for d in range(n)}).out()


def scipy_grid(n, method):
    """scipy's interpolator of the same table; its cubic with a direct solver (its default
    iterative one stops at about 1e-7)."""
    table = TABLE[(slice(None),) * n + (0,) * (3 - n)]
    return RegularGridInterpolator(GRID[:n], table, method=method, bounds_error=False,
                                   fill_value=None, **({"solver": spsolve} if method == "cubic"
                                                       else {}))


def clipped(n):
    return np.column_stack([np.clip(POINTS[:, d], GRID[d][0], GRID[d][-1]) for d in range(n)])


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("method", ["linear", "nearest", "cubic"])
def test_clipped_against_scipy(n, method):
    got = lookup(n, POINTS[:, :n], method=method)
    ref = scipy_grid(n, method)(clipped(n))
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3])
def test_linear_extrapolation_is_scipys_multilinear_extension(n):
    # RegularGridInterpolator(fill_value=None) continues the edge cells' multilinear form
    got = lookup(n, POINTS[:, :n], extrapolation="linear")
    np.testing.assert_allclose(got, scipy_grid(n, "linear")(POINTS[:, :n]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3])
def test_cubic_extrapolation_is_the_tangent_plane_at_the_box(n):
    # y(c) + sum_k dy/du_k(c) (u_k - c_k), c the clipped point: scipy's value and partial
    # derivatives (its `nu`) of the same spline there
    f, c = scipy_grid(n, "cubic"), clipped(n)
    ref = f(c) + sum(f(c, nu=tuple(int(j == k) for j in range(n))) * (POINTS[:, k] - c[:, k])
                     for k in range(n))
    got = lookup(n, POINTS[:, :n], method="cubic", extrapolation="linear")
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11)


def test_the_table_at_its_breakpoints_and_nearest_ties_by_hand():
    # every method returns the table itself at the grid points
    mesh = np.stack(np.meshgrid(*GRID[:2], indexing="ij"), axis=-1).reshape(-1, 2)
    for method in ("linear", "nearest", "cubic"):
        np.testing.assert_allclose(lookup(2, mesh, method=method), TABLE[:, :, 0].ravel(),
                                   rtol=0, atol=1e-13)
    # half way between breakpoints nearest takes the upper one (as lookup and lookup_2d)
    tie = np.array([[-0.5, -1.5]])
    assert lookup(2, tie, method="nearest")[0] == TABLE[1, 1, 0]


def test_a_bilinear_value_by_hand():
    # the cell [0, 0.5] x [-1, 0] at s = 0.2/0.5, r = 0.25: (1-s)(1-r) z00 + ...
    s, r, z = 0.4, 0.25, TABLE[:, :, 0]
    by_hand = ((1 - s) * (1 - r) * z[1, 1] + (1 - s) * r * z[1, 2] + s * (1 - r) * z[2, 1]
               + s * r * z[2, 2])
    assert lookup(2, np.array([[0.2, -0.75]]))[0] == pytest.approx(by_hand, abs=1e-15)


@pytest.mark.parametrize("method", ["linear", "nearest", "cubic"])
def test_scalar_inputs(method):
    # the common case: one scalar per dimension, a scalar out
    rig = Rig(LookupND, {"breakpoints": list(GRID), "table": TABLE, "method": method},
              {"u1": (), "u2": (), "u3": ()})
    got = rig.set(u1=0.3, u2=-0.7, u3=2.2).out()
    assert got.shape == ()
    assert got == pytest.approx(scipy_grid(3, method)([[0.3, -0.7, 2.2]])[0], abs=1e-12)


def test_inputs_broadcast_element_wise():
    rig = Rig(LookupND, {"breakpoints": list(GRID[:2]), "table": TABLE[:, :, 0]},
              {"u1": (), "u2": (2, 3)})
    u2 = np.linspace(-2.5, 2.5, 6).reshape(2, 3)
    got = rig.set(u1=0.3, u2=u2).out()
    ref = scipy_grid(2, "linear")(np.column_stack([np.full(6, 0.3), np.clip(u2.ravel(), -2, 2)]))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got.ravel(), ref, rtol=0, atol=1e-13)


DIAGRAM = """\
blocksim: 1
blocks:
  U: {{type: constant, value: [0.3, -0.7, 2.2]}}
  P: {{type: demux, sizes: [1, 1, 1]}}
  T: {{type: lookup_nd, breakpoints: {bp}, table: {table}, method: {method}}}
wires: [U -> P, P.y1 -> T.u1, P.y2 -> T.u2, P.y3 -> T.u3]
simulation: {{stop: 0.1}}
record: {{y: T.y}}
"""
BP = "[[-1, 0, 0.5, 2], [-2, -1, 0, 1.5, 2], [0, 0.5, 1, 3]]"


@pytest.mark.parametrize("method", ["linear", "cubic"])
def test_csv_and_npz_files_hold_the_same_table(tmp_path, method):
    """A CSV holds the table with rows along the first dimension (the others row-major),
    an NPZ the n-D array; paths are relative to the diagram."""
    (tmp_path / "data").mkdir()
    lines = ["# u1 rows; u2 x u3 columns"] + [", ".join(map(repr, row))
                                              for row in TABLE.reshape(4, -1).tolist()]
    (tmp_path / "data" / "t.csv").write_text("\n".join(lines) + "\n")
    np.savez(tmp_path / "data" / "t.npz", table=TABLE, other=np.zeros(2))
    results = []
    for table in ("data/t.csv", "data/t.npz", repr(TABLE.tolist())):
        path = tmp_path / "d.yaml"
        path.write_text(DIAGRAM.format(bp=BP, table=table, method=method))
        results.append(blocksim.run(path)["y"])
    ref = scipy_grid(3, method)([[0.3, -0.7, 2.2]])
    for y in results:
        np.testing.assert_allclose(y, ref[0], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(y, results[0])


def test_a_table_changed_by_set_reads_its_new_file(tmp_path):
    np.savez(tmp_path / "a.npz", np.full((4, 5, 4), 2.0))
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.format(bp=BP, table="a.npz", method="linear"))
    model = blocksim.load(path)
    np.savez(tmp_path / "b.npz", table=np.full((4, 5, 4), -1.0))
    assert blocksim.execute(model)["y"][-1, 0] == pytest.approx(2.0, abs=1e-14)
    model.set("blocks.T.table", "b.npz")
    assert blocksim.execute(model)["y"][-1, 0] == pytest.approx(-1.0, abs=1e-14)


def test_the_cubic_coefficients_are_computed_once_at_load(tmp_path, monkeypatch):
    import blocks.lookup_nd as module
    calls = []
    compute = module._cubic_coefficients
    monkeypatch.setattr(module, "_cubic_coefficients", lambda *a: calls.append(1) or compute(*a))
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.format(bp=BP, table=repr(TABLE.tolist()), method="cubic"))
    blocksim.load(path)
    assert len(calls) == 1


def test_check_describes_the_table(tmp_path):
    """blocksim check's lines under the block: the NPZ's shape, its range (TABLE's own min
    and max), the method, each input's breakpoints (GRID's)."""
    np.savez(tmp_path / "t.npz", table=TABLE)
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.format(bp=BP, table="t.npz", method="cubic"))
    block = blocksim.load(path).block("T")
    assert block.describe() == [
        f"table 4 x 5 x 4 (t.npz), values {TABLE.min():g} .. {TABLE.max():g}; cubic, clip "
        "outside the breakpoints",
        "u1: 4 breakpoints, -1 .. 2", "u2: 5 breakpoints, -2 .. 2", "u3: 4 breakpoints, 0 .. 3"]


def bad(tmp_path, capsys, bp=BP, table=repr(TABLE.tolist()), method="linear", files=()):
    """(the message, the line it points at) of a diagram with a bad lookup_nd."""
    from blocksim.cli import main
    for name, text in files:
        (tmp_path / name).write_text(text)
    path = tmp_path / "d.yaml"
    path.write_text(DIAGRAM.format(bp=bp, table=table, method=method))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{path}:5: error:" in err, err
    return err


def test_breakpoints_that_are_not_increasing(tmp_path, capsys):
    err = bad(tmp_path, capsys, bp="[[-1, 0, 0.5, 2], [-2, -1, 0, 0, 2], [0, 0.5, 1, 3]]")
    assert "strictly increasing: breakpoints[1][2] = 0, breakpoints[1][3] = 0" in err


def test_a_table_whose_size_disagrees(tmp_path, capsys):
    err = bad(tmp_path, capsys, table=repr(TABLE[:, :4].tolist()))
    assert "the table has shape (4, 4, 4), the breakpoints give (4, 5, 4)" in err


def test_a_csv_with_a_wrong_row_or_a_bad_value(tmp_path, capsys):
    rows = "\n".join(", ".join(["1"] * 20) for _ in range(3))
    err = bad(tmp_path, capsys, table="t.csv", files=[("t.csv", rows)])
    assert "t.csv holds 3 row(s) of 20 value(s); the breakpoints give 4 row(s)" in err
    rows = "1, 2\n3, x\n"
    err = bad(tmp_path, capsys, table="t.csv", files=[("t.csv", rows)])
    assert "t.csv: line 2: not a number: 'x'" in err


def test_an_npz_with_several_arrays_none_named_table(tmp_path, capsys):
    np.savez(tmp_path / "t.npz", a=TABLE, b=TABLE)
    err = bad(tmp_path, capsys, table="t.npz")
    assert "t.npz holds 2 arrays (a, b): name the table's array 'table'" in err


def test_a_missing_file_and_too_few_breakpoints_for_cubic(tmp_path, capsys):
    assert "no such file" in bad(tmp_path, capsys, table="nowhere.csv")
    err = bad(tmp_path, capsys, bp="[[-1, 0, 0.5], [-2, -1, 0, 1.5, 2], [0, 0.5, 1, 3]]",
              table=repr(TABLE[:3].tolist()), method="cubic")
    assert "expected at least 4 breakpoints in breakpoints[0], got 3" in err

