"""FMUs built once per test session from the C models in tests/fmu/models (FMI 2.0 and 3.0),
with the machine's C compiler against the FMI headers fmpy ships."""
import hashlib
from pathlib import Path

import pytest

MODELS = Path(__file__).parent / "models"
NAMES = ("dahlquist", "vanderpol", "bouncing_ball", "stair", "feedthrough", "lag")


@pytest.fixture(scope="session")
def fmus(tmp_path_factory):
    """{(model name, FMI version): path of its FMU}."""
    pytest.importorskip("fmpy")
    from blocksim.fmi.build import BuildError, build_fmu, model_from_yaml
    out = tmp_path_factory.mktemp("fmus")
    built = {}
    try:
        for name in NAMES:
            model = model_from_yaml(MODELS / f"{name}.yaml")
            for fmi in (2, 3):
                built[name, fmi] = build_fmu(model, out / f"{name}_fmi{fmi}.fmu", fmi)
    except BuildError as e:
        if "no C compiler" in str(e):
            pytest.skip(str(e))
        raise
    return built


@pytest.fixture(scope="session")
def diagram(fmus):
    """diagram(name, fmi, text): a diagram file beside the FMU of (name, fmi), `FMU` in the
    text standing for its file name."""
    def write(name, fmi, text):
        fmu = fmus[name, fmi]
        path = fmu.parent / f"{fmu.stem}_{hashlib.sha1(text.encode()).hexdigest()[:10]}.yaml"
        path.write_text(text.replace("FMU", fmu.name))
        return path
    return write
