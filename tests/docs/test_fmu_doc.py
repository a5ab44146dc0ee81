"""docs/fmu.md followed as written: its commands run in order in a folder holding
diagrams/fmu_motor.yaml and the motor's C and description (the page builds the FMU itself),
and the outputs it shows are the commands' outputs."""
import shutil
from pathlib import Path

import pytest
from docfiles import blocks, check_ran, follow

pytest.importorskip("fmpy")
ROOT = Path(__file__).resolve().parents[2]
PAGE = "fmu.md"


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    work = tmp_path_factory.mktemp("fmu_doc")
    (work / "diagrams" / "fmu").mkdir(parents=True)
    shutil.copy(ROOT / "diagrams" / "fmu_motor.yaml", work / "diagrams")
    for name in ("dc_motor.c", "dc_motor.yaml"):
        shutil.copy(ROOT / "diagrams" / "fmu" / name, work / "diagrams" / "fmu")
    return work, follow(PAGE, work, ROOT)


def test_every_command_runs_as_the_page_says(followed):
    work, results = followed
    assert len(results) == 7
    check_ran(results, "the FMU has no parameter 'Rs' (did you mean 'R'?)")
    assert (work / "diagrams" / "fmu" / "dc_motor.fmu").is_file()
    assert (work / "runs" / "fmu_loop.png").is_file()


def test_the_outputs_shown_are_the_commands_outputs(followed):
    _, results = followed
    everything = "\n".join(r.stdout + r.stderr for _, _, r in results)
    shown = [text for lang, name, text in blocks(PAGE) if not lang and not name]
    assert len(shown) == 5
    for text in shown:
        for line in text.splitlines():
            if line.strip():
                assert line in everything, line
