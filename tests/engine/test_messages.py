"""Messages a newcomer reads: every one names the file, and hints suggest the fix."""
from blocksim.cli import main


def test_a_diagram_without_stop_names_its_file(tmp_path, capsys):
    path = tmp_path / "nostop.yaml"
    path.write_text("blocksim: 1\nblocks:\n  C: {type: clock}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: error: simulation.stop is required"), err
    assert "<diagram>" not in err


def test_an_unconnected_input_is_fed_a_constant_not_a_terminator(tmp_path, capsys):
    path = tmp_path / "open.yaml"
    path.write_text("blocksim: 1\nblocks:\n  Err: {type: sum, signs: '+-'}\n"
                    "  C: {type: constant, value: 1}\nwires: [C -> Err.u1]\n"
                    "simulation: {stop: 1}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: error: block 'Err' port 'u2': input is not connected" in err
    assert "`Zero: {type: constant, value: 0}`" in err and "`Zero -> Err.u2`" in err
    assert "terminator" not in err


def test_check_names_the_robot_kernels_in_use(capsys):
    from pathlib import Path

    from blocks.robot import backend
    demo1 = Path(__file__).resolve().parents[2] / "diagrams" / "demo1.yaml"
    assert main(["check", str(demo1)]) == 0
    out = capsys.readouterr().out
    expected = {"c": "C extension", "numba": "numba", "python": "plain Python"}[backend.name()]
    assert f"robot kernels: {expected}" in out
