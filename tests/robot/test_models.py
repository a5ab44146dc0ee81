"""Built-in robot models (robots.md sanity values) and the strict robot-file loader."""

import numpy as np
import pytest

from blocks.robot import RobotDataError, load_robot, robot_from_dict
from blocks.robot.link import inertia_tensor
from blocks.robot.models import parse_number

DEG = np.pi / 180


# ---------------------------------------------------------------- published sanity values
def test_puma560_sanity_values():
    p = load_robot("puma560")
    qz = p.poses["qz"]
    T = p.fkine(qz)
    # robots.md: fkine(qz) = identity rotation, position (0.4521, −0.15005, 0.4318)
    np.testing.assert_allclose(T[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(T[:3, 3], [0.4521, -0.15005, 0.4318], atol=1e-12)
    # robots.md: gravload(qz) = [0, 37.4837, 0.2489, 0, 0, 0] N·m
    np.testing.assert_allclose(p.gravload(qz), [0, 37.4837, 0.2489, 0, 0, 0], atol=5e-5)
    # robots.md: diag M(qz) ≈ [3.9611, 4.4566, 0.9387, 0.1924, 0.1713, 0.1941] (motors included)
    np.testing.assert_allclose(np.diag(p.inertia(qz)),
                               [3.9611, 4.4566, 0.9387, 0.1924, 0.1713, 0.1941], atol=5e-5)


def test_puma560akb_sanity_values():
    p = load_robot("puma560akb")
    assert p.mdh and np.all(p.B == 0) and np.all(p.Tc == 0)
    qz = p.poses["qz"]
    # robots.md: fkine(qz) position (0.4115, 0.1501, 0.4331)
    np.testing.assert_allclose(p.fkine(qz)[:3, 3], [0.4115, 0.1501, 0.4331], atol=1e-12)
    # robots.md: diag M(qz) ≈ [4.274, 6.797, 1.179, 0.204, 0.182, 0.206]
    np.testing.assert_allclose(np.diag(p.inertia(qz)), [4.274, 6.797, 1.179, 0.204, 0.182, 0.206],
                               atol=5e-4)


def test_twolink_sanity_value():
    # robots.md: unit masses at the distal joints, unit lengths: M(qz) = [[5, 2], [2, 1]]
    np.testing.assert_allclose(load_robot("twolink").inertia([0, 0]), [[5, 2], [2, 1]], atol=1e-15)


def test_model_tables():
    p = load_robot("puma560")
    assert (p.name, p.manufacturer, p.comment) == ("Puma 560", "Unimation", "params of 8/95")
    # joint limits in degrees (robots.md) converted to radians
    np.testing.assert_allclose(p.qlim / DEG, [[-160, 160], [-45, 225], [-225, 45], [-110, 170],
                                              [-100, 100], [-266, 266]], rtol=1e-14)
    np.testing.assert_allclose(p.poses["qn"], [0, np.pi / 4, np.pi, 0, np.pi / 4, 0])
    np.testing.assert_allclose(p.poses["qr"], [0, np.pi / 2, -np.pi / 2, 0, 0, 0])
    np.testing.assert_allclose(p.poses["qstretch"], [0, 0, -np.pi / 2, 0, 0, 0])
    np.testing.assert_array_equal(p.I[1], np.diag([0.13, 0.524, 0.539]))
    np.testing.assert_array_equal(p.Tc[3], [11.2e-3, -16.9e-3])
    np.testing.assert_array_equal(p.Jm, [200e-6] * 3 + [33e-6] * 3)
    akb = load_robot("puma560akb")
    np.testing.assert_allclose(akb.poses["qr"], [0, -np.pi / 2, np.pi / 2, 0, 0, 0])
    np.testing.assert_array_equal(akb.d, [0, 0.2435, -0.0934, 0.4331, 0, 0])
    np.testing.assert_array_equal(akb.Jm, [291e-6, 409e-6, 299e-6, 35e-6, 35e-6, 35e-6])
    s = load_robot("stanford")
    assert s.config == "RRPRRR" and s.theta[2] == pytest.approx(-np.pi / 2)
    np.testing.assert_array_equal(s.r[2], [0, 0, -6.447])      # kept as published
    np.testing.assert_array_equal(s.Jm, [0.953, 2.193, 0.782, 0.106, 0.097, 0.020])


def test_aliases_and_paths(tmp_path):
    assert load_robot("p560").name == "Puma 560"
    assert load_robot("p560m").mdh and load_robot("stanf").n == 6 and load_robot("tl").n == 2
    f = tmp_path / "arm.yaml"
    f.write_text("name: one\nlinks:\n  - {a: 0.5, m: 1, r: [-0.25, 0, 0]}\n")
    arm = load_robot(f)
    assert arm.name == "one" and arm.n == 1
    assert load_robot(str(f)).a[0] == 0.5
    with pytest.raises(RobotDataError, match="did you mean 'puma560'"):
        load_robot("puma56")
    with pytest.raises(RobotDataError, match="no such robot file"):
        load_robot(tmp_path / "missing.yaml")


# ---------------------------------------------------------------- number parser
@pytest.mark.parametrize("text, value", [
    ("pi/2", np.pi / 2), ("-pi/2", -np.pi / 2), ("-160*pi/180", -160 * np.pi / 180),
    ("200e-6", 200e-6), ("2*pi", 2 * np.pi), (" 0.5 ", 0.5), ("pi", np.pi), ("--1", 1.0),
    ("3/4/2", 0.375), (".5e1", 5.0)])
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text", ["pi+1", "2**3", "sin(1)", "1/", "*2", "", "e", "pi pi"])
def test_parse_number_rejects(text):
    with pytest.raises(ValueError):
        parse_number(text)


# ---------------------------------------------------------------- validation
def good():
    return {"name": "arm", "links": [{"a": 1, "m": 1}, {"a": 1, "m": 1, "qlim": ["-pi/2", "pi/2"]}],
            "poses": {"qz": [0, 0]}}


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["links"][1].update(alph=1), r"links\[1\]\.alph: unknown key; did you mean 'alpha'\?"),
    (lambda d: d.update(gravitiy=[0, 0, 9.81]), r"gravitiy: unknown key; did you mean 'gravity'\?"),
    (lambda d: d["links"][1].update(m="heavy"), r"links\[1\]\.m: expected a number"),
    (lambda d: d["links"][0].update(m=True), r"links\[0\]\.m: expected a number"),
    (lambda d: d["links"][0].update(r=[0, 0]), r"links\[0\]\.r: expected 3 values, got 2"),
    (lambda d: d["links"][0].update(I=[1, 2, 3]), r"links\[0\]\.I: expected 6 values"),
    (lambda d: d["links"][0].update(I=[[1, 0, 0], [0, 1, 0]]), r"links\[0\]\.I: expected a 3x3"),
    (lambda d: d["links"][0].update(r=[0, "x", 0]), r"links\[0\]\.r\[1\]: expected a number"),
    (lambda d: d["links"][0].update(type="spherical"), r"links\[0\]\.type: expected one of"),
    (lambda d: d["links"][0].update(theta=0.2), r"links\[0\]: .*offset"),
    (lambda d: d["links"][1].update(qlim=[1, -1]), r"links\[1\]\.qlim: expected \[min, max\]"),
    (lambda d: d["poses"].update(qr=[0, 0, 0]), r"poses\.qr: expected 2 values, got 3"),
    (lambda d: d.update(convention="craig"), r"convention: expected one of standard, modified"),
    (lambda d: d.update(base=[[1, 0, 0, 0]]), r"base: expected a 4x4 matrix"),
    (lambda d: d.update(base=[[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
     r"base must be a 4x4 homogeneous transform"),
    (lambda d: d.pop("links"), r"links: missing"),
    (lambda d: d.update(links=[]), r"links: expected a non-empty list"),
    (lambda d: d.update(name=3), r"name: expected a string"),
    # issue 16: no NaN anywhere, no infinity but in joint limits; 1/0 and 10**400 are refused
    (lambda d: d["links"][0].update(m=float("nan")), r"links\[0\]\.m: expected a finite number"),
    (lambda d: d["links"][0].update(r=[0, float("inf"), 0]), r"links\[0\]\.r\[1\]: expected a finite"),
    (lambda d: d["links"][0].update(m="1/0"), r"links\[0\]\.m: expected a number"),
    (lambda d: d["links"][0].update(m=10 ** 400), r"links\[0\]\.m: the number .* too large"),
    (lambda d: d["links"][1].update(qlim=[float("nan"), 1]), r"links\[1\]\.qlim\[0\]: expected a finite"),
])
def test_invalid_data_names_the_key_path(edit, message):
    data = good()
    robot_from_dict(data)                    # the unedited data are valid
    edit(data)
    with pytest.raises(RobotDataError, match="^<inline>: " + message):
        robot_from_dict(data)


def test_infinite_joint_limits_are_allowed():
    data = good()
    data["links"][1]["qlim"] = [float("-inf"), float("inf")]
    assert np.isinf(robot_from_dict(data).qlim[1]).all()


ROBOT_FILE = "name: arm\nlinks:\n  - {a: 0.5, m: 1}\n  - {a: 0.5, m: 1}\n"


@pytest.mark.parametrize("content, message", [
    (b"name: arm\n\xff\n", r"arm\.yaml:2: the file is not UTF-8 text \(invalid byte 0xff\)"),
    (("a: " + "[" * 10000 + "]" * 10000 + "\n").encode(),
     r"arm\.yaml:1: the document is nested deeper than 100 levels"),
    (ROBOT_FILE.encode() + b"name: again\n", r"arm\.yaml:5: duplicate key 'name'"),
    (ROBOT_FILE.replace("m: 1}", 'm: !!int ""}', 1).encode(), r"arm\.yaml:3: invalid int ''"),
    (ROBOT_FILE.replace("m: 1}", "m: !!bool maybe}", 1).encode(), r"arm\.yaml:3: invalid bool"),
    (ROBOT_FILE.replace("m: 1}", "m: !!timestamp 20x}", 1).encode(), r"arm\.yaml:3: invalid time"),
    (ROBOT_FILE.encode() + b"x: !!python/object:os.system echo\n", r"arm\.yaml:5: YAML tags"),
])
def test_robot_file_is_read_as_strictly_as_a_diagram(tmp_path, content, message):
    """Issue 16: a robot file goes through the diagrams' loader (it used yaml.safe_load,
    which crashed with RecursionError, UnicodeDecodeError, IndexError... and kept the last
    of two duplicate keys)."""
    path = tmp_path / "arm.yaml"
    path.write_bytes(content)
    with pytest.raises(RobotDataError, match="^" + message):
        load_robot(path)


def test_robot_file_with_a_bom_is_read(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + ROBOT_FILE.encode())  # as diagrams: a BOM is fine
    assert load_robot(path).n == 2


def test_robot_file_is_built_once_and_again_when_it_changes(tmp_path):
    """A batch of runs loads the same robot file for every run: one robot (immutable) serves
    them; an edited file is a new robot."""
    path = tmp_path / "arm.yaml"
    path.write_text(ROBOT_FILE)
    first = load_robot(path)
    assert load_robot(path) is first and list(first.a) == [0.5, 0.5]
    path.write_text(ROBOT_FILE.replace("a: 0.5", "a: 0.75"))  # another size: seen at once
    assert list(load_robot(path).a) == [0.75, 0.75]


def test_inertia_tensor_symmetry():
    """Exactly symmetric tensors pass as they are; within rtol 1e-12 they are symmetrised;
    beyond it they are refused."""
    I = np.array([[1.0, 0.1, 0.2], [0.1, 2.0, 0.3], [0.2, 0.3, 3.0]])
    assert np.array_equal(inertia_tensor(I), I)
    near = I.copy()
    near[0, 1] += 1e-14
    assert np.array_equal(inertia_tensor(near), (near + near.T) / 2)
    far = I.copy()
    far[0, 1] += 1e-6
    with pytest.raises(ValueError, match="not symmetric"):
        inertia_tensor(far)


def test_error_is_a_value_error_with_source_and_path():
    data = good()
    data["links"][0]["Jm"] = "lots"
    with pytest.raises(ValueError) as info:
        robot_from_dict(data, source="my_arm.yaml")
    assert info.value.source == "my_arm.yaml" and info.value.path == "links[0].Jm"
    assert str(info.value).startswith("my_arm.yaml: links[0].Jm: expected a number")


def test_inertia_as_matrix_and_scalar_coulomb():
    data = good()
    data["links"][0].update(I=[[1, 0.1, 0], [0.1, 2, 0], [0, 0, 3]], Tc=0.5, type="prismatic")
    arm = robot_from_dict(data)
    np.testing.assert_array_equal(arm.I[0], [[1, 0.1, 0], [0.1, 2, 0], [0, 0, 3]])
    np.testing.assert_array_equal(arm.Tc[0], [0.5, -0.5])
    assert arm.config == "PR"
