"""The editor's server and JSON API (docs/editor.md), without a browser: who may ask, what
it serves, and each request on a real diagram."""
import json
import time

import numpy as np
import pytest

import blocksim
from editor_server import ROOT, Running, copy_diagram


@pytest.fixture
def demo3(tmp_path):
    path = copy_diagram("demo3.yaml", tmp_path)
    with Running(path, tmp_path / "runs") as server:
        yield server


def test_the_api_wants_the_token(demo3):
    for method, name, body in (("GET", "diagram", None), ("GET", "catalogue", None),
                               ("POST", "edit", {"op": "rename", "block": "Kp", "name": "K"}),
                               ("POST", "save", {}), ("POST", "run", {})):
        status, _, data = demo3.request(method, f"/api/{name}", body, token=False)
        assert status == 403, name
        status, _, _ = demo3.request(method, f"/api/{name}", body, token=False,
                                     headers={"X-Blocksim-Token": "not-the-token"})
        assert status == 403, name
    assert not demo3.session.doc.dirty  # nothing was edited


def test_other_origins_and_hosts_are_refused(demo3):
    port = demo3.server.port
    for headers in ({"Origin": "http://evil.example"}, {"Origin": f"http://127.0.0.1:{port + 1}"},
                    {"Origin": "null"}, {"Host": f"evil.example:{port}"},
                    {"Host": f"127.0.0.1.evil.example:{port}"}, {"Host": None}):
        for path in ("/", "/api/diagram", "/assets/editor.js"):
            status, _, _ = demo3.request("GET", path, headers=headers)
            assert status == 403, (headers, path)
    status, _, _ = demo3.request("GET", "/api/diagram",
                                 headers={"Origin": f"http://localhost:{port}",
                                          "Host": f"localhost:{port}"})
    assert status == 200


def test_nothing_is_served_outside_the_assets_and_the_run_directory(demo3, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the page")
    demo3.api("POST", "edit", {"op": "entry", "section": "simulation", "key": "stop",
                               "text": "0.05"})
    demo3.api("POST", "run")
    wait(demo3)
    run_dir = tmp_path / "runs" / "demo3"
    (run_dir / "link.txt").symlink_to(secret)
    token = demo3.server.token
    for path in ("/assets/../server.py", "/assets/%2e%2e/server.py", "/assets/..%2fserver.py",
                 "/assets/%2e%2e%2f%2e%2e%2fcli.py", f"/run/../../secret.txt?token={token}",
                 f"/run/%2e%2e/%2e%2e/secret.txt?token={token}", f"/run/link.txt?token={token}",
                 f"/run/..%2F..%2Fdemo3.yaml?token={token}", f"/run/{tmp_path}/secret.txt?token={token}",
                 "/etc/passwd", "/../demo3.yaml", "/assets/", f"/run/?token={token}"):
        status, _, data = demo3.request("GET", path, token=False)
        assert status in (403, 404), path
        assert b"not for the page" not in data and b"import" not in data, path
    status, headers, data = demo3.request("GET", f"/run/meta.json?token={token}", token=False)
    assert status == 200 and json.loads(data)["name"] == "demo3"
    assert demo3.request("GET", "/run/meta.json", token=False)[0] == 403


def test_the_page_and_its_assets_are_served_with_a_strict_policy(demo3):
    status, headers, data = demo3.request("GET", "/", token=False)
    assert status == 200 and b"<script src=\"/assets/editor.js\"" in data
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"  # the address holds the token
    for name in ("editor.js", "editor.css"):
        status, headers, _ = demo3.request("GET", f"/assets/{name}", token=False)
        assert status == 200, name


def test_bad_requests_are_answered_with_their_reason(demo3):
    status, _, data = demo3.request("POST", "/api/edit", token=True,
                                    headers={"Content-Type": "application/json"})
    assert status == 400
    assert demo3.api("POST", "edit", {"op": "fly"}, status=400) == {"error": "unknown edit 'fly'"}
    assert "no block 'Nope'" in demo3.api("POST", "edit", {"op": "rename", "block": "Nope",
                                                           "name": "X"}, status=400)["error"]
    assert demo3.api("GET", "nothing", status=404)
    assert demo3.api("GET", "edit", status=405)


def test_the_view_is_the_drawing_of_the_diagram(demo3):
    view = demo3.api("GET", "diagram")
    model = blocksim.load(demo3.session.doc.path)
    assert sorted(b["key"] for b in view["boxes"]) == sorted(model.spec.blocks)
    assert len(view["wires"]) == len(model.spec.written_wires)
    wire = next(w for w in view["wires"] if w["id"] == "rne.tau->Robot.tau")
    rne = next(b for b in view["boxes"] if b["key"] == "rne")
    robot = next(b for b in view["boxes"] if b["key"] == "Robot")
    assert wire["points"][0] == [rne["x"] + rne["w"], rne["outputs"][0]["y"]]
    tau = next(p for p in robot["inputs"] if p["name"] == "tau")
    assert wire["points"][-1] == [robot["x"], tau["y"]]
    assert view["problems"] == [] and not view["dirty"]
    assert view["sections"]["simulation"]["stop"] == {"source": "10", "value": 10}
    catalogue = demo3.api("GET", "catalogue")
    gain = next(t for f in catalogue["families"] for t in f["types"] if t["type"] == "gain")
    assert gain["params"][0]["name"] == "K" and gain["params"][0]["required"]


def test_edits_checks_undo_and_save(demo3):
    path = demo3.session.doc.path
    before = path.read_text()
    trial = demo3.api("POST", "check", {"block": "Kp", "param": "K", "text": "[1, 2"})
    assert trial["problems"] and trial["problems"][0]["path"] == ["blocks", "Kp", "K"]
    assert demo3.session.doc.sources[path].text == before and not demo3.session.doc.can_undo
    view = demo3.api("POST", "edit", {"op": "param", "block": "Kp", "param": "K", "text": "qq"})
    problem = view["problems"][0]
    assert problem["block"] == "Kp" and problem["path"] == ["blocks", "Kp", "K"]
    assert "demo3.yaml:16: error: block 'Kp' parameter 'K'" in problem["text"]
    view = demo3.api("POST", "undo")
    assert view["problems"] == [] and not view["dirty"] and view["can_redo"]
    view = demo3.api("POST", "edit", {"op": "add", "type": "gain", "x": 400, "y": 300})
    assert view["made"] == ["Gain"] and view["positioned"]
    view = demo3.api("POST", "edit", {"op": "connect", "src": "Kd.y", "dst": "Gain.u"})
    assert any(w["id"] == "Kd.y->Gain.u" for w in view["wires"])
    assert any("missing required parameter 'K'" in p["text"] and p["block"] == "Gain"
               for p in view["problems"])
    view = demo3.api("POST", "edit", {"op": "delete", "blocks": ["Gain"]})
    view = demo3.api("POST", "edit", {"op": "delete", "wires": ["Sum.y->ErrScope.u1"]})
    assert not any(w["id"] == "Sum.y->ErrScope.u1" for w in view["wires"])
    saved = demo3.api("POST", "save")
    assert saved["saved"] == [str(path)] and not saved["dirty"]
    text = path.read_text()
    assert "  - Sum -> ErrScope.u1\n" not in text and "layout:\n" in text


def wait(server, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        status = server.api("GET", "run")
        if status["state"] not in ("starting", "running"):
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


def test_a_run_gives_the_results_blocksim_run_gives(tmp_path):
    path = copy_diagram("msd.yaml", tmp_path)
    with Running(path, tmp_path / "runs") as server:
        server.api("POST", "edit", {"op": "param", "block": "Spring", "param": "K",
                                    "text": "8"})  # unsaved: the run uses the edited text
        server.api("POST", "run")
        status = wait(server)
        assert status["state"] == "done" and status["fraction"] == 1.0
        results = server.api("GET", "results")
    expected = blocksim.run(path, overrides={"blocks.Spring.K": 8})
    x = next(s for s in results["signals"] if s["name"] == "x")
    assert np.array_equal(x["t"], expected.t) and np.array_equal(x["data"][0], expected["x"])
    scope = next(s for s in results["scopes"] if s["name"] == "Scope")
    assert [i["label"] for i in scope["inputs"]] == ["Position.y", "Velocity.y"]
    assert (tmp_path / "runs" / "msd" / "Scope.png").is_file()
    assert "Scope.png" in status["files"]


def test_a_failed_run_names_its_block(tmp_path):
    path = tmp_path / "blowup.yaml"
    path.write_text("blocksim: 1\nblocks:\n  X: {type: integrator, x0: 1}\n"
                    "  Sq: {type: function, expr: 'x**2', inputs: [x]}\n"
                    "wires: [X -> Sq, Sq -> X]\nsimulation: {stop: 2}\n")
    with Running(path, tmp_path / "runs") as server:
        server.api("POST", "run")
        status = wait(server)
    assert status["state"] == "failed" and status["error"]["block"] in ("X", "Sq")
    assert status["error"]["text"].startswith("simulation error:")


def test_an_invalid_diagram_is_not_run(tmp_path):
    with Running(tmp_path / "new.yaml", tmp_path / "runs") as server:
        view = server.api("GET", "diagram")
        assert view["boxes"] == [] and view["dirty"]
        assert [p["text"] for p in view["problems"]][0].endswith("error: missing 'blocks'")
        server.api("POST", "run")
        status = wait(server)
    assert status["state"] == "invalid" and status["problems"]
    assert not (tmp_path / "new.yaml").exists()


def test_stop_ends_a_run_and_keeps_what_it_recorded(tmp_path):
    path = copy_diagram("msd.yaml", tmp_path)
    with Running(path, tmp_path / "runs") as server:
        server.api("POST", "edit", {"op": "entry", "section": "simulation", "key": "stop",
                                    "text": "1e5"})  # long enough to be stopped
        server.api("POST", "edit", {"op": "entry", "section": "simulation", "key": "mode",
                                    "text": "normal", "literal": True})
        server.api("POST", "run")
        deadline = time.monotonic() + 60
        while (server.api("GET", "run")["t"] or 0) <= 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        server.api("POST", "stop")
        status = wait(server)
    assert status["state"] == "stopped"
    meta = json.loads((tmp_path / "runs" / "msd" / "meta.json").read_text())
    assert meta["complete"] is False and meta["status"] == "interrupted"
    assert 0 < meta["end_time"] < 1e5


def test_inside_a_subsystem_its_ports_are_wired_and_unwired(tmp_path):
    path = copy_diagram("loop.yaml", tmp_path, source=ROOT / "tests" / "draw" / "data")
    with Running(path, tmp_path / "runs") as server:
        level = ["Ctl"]
        view = server.api("POST", "edit", {"level": level, "op": "add", "type": "gain",
                                           "x": 100, "y": 200})
        gain = view["made"][0]
        view = server.api("POST", "edit", {"level": level, "op": "connect", "src": "in:r.r",
                                           "dst": f"{gain}.u"})
        assert f"in:r.r->{gain}.u" in [w["id"] for w in view["wires"]]
        view = server.api("POST", "edit", {"level": level, "op": "delete",
                                           "wires": [f"in:r.r->{gain}.u", "U.y->out:u.u"]})
        ids = [w["id"] for w in view["wires"]]
        assert f"in:r.r->{gain}.u" not in ids and "U.y->out:u.u" not in ids
        view = server.api("POST", "undo", {"level": level})  # the two wires were one edit
        ids = [w["id"] for w in view["wires"]]
        assert f"in:r.r->{gain}.u" in ids and "U.y->out:u.u" in ids
        server.api("POST", "edit", {"op": "add", "type": "subsystem", "x": 0, "y": 300})
        inner = server.api("GET", "diagram?level=Subsystem")
        assert {b["key"] for b in inner["boxes"]} == {"Gain", "in:u", "out:y"}
        server.api("POST", "save")
    model_text = path.read_text()
    assert "inputs: {r: [Err.u1, Gain], y: Err.u2}" in model_text
    assert "  Subsystem:\n    type: subsystem\n    diagram:\n      blocks:\n" in model_text


def test_problems_land_on_their_fields(tmp_path):
    path = tmp_path / "new.yaml"
    with Running(path, tmp_path / "runs") as server:
        view = server.api("POST", "edit", {"op": "add", "type": "gain", "x": 0, "y": 0})
        places = {p["text"].split("error: ")[1]: (p["block"], p["path"]) for p in view["problems"]}
        assert places == {"simulation.stop is required\n  hint: add `simulation: {stop: 10}` "
                          "(the end time, in s)": (None, ["simulation", "stop"]),
                          "block 'Gain': missing required parameter 'K'": (
                              "Gain", ["blocks", "Gain", "K"])}


def test_a_problem_on_a_line_of_several_entries_lands_on_the_one_it_names(demo3):
    view = demo3.api("POST", "edit", {"op": "entry", "section": "simulation", "key": "rtol",
                                      "text": "-1"})  # simulation: {solver: rk45, rtol: ...}
    (rtol,) = view["problems"]
    assert "simulation.rtol must be a positive finite number" in rtol["text"]
    assert rtol["path"] == ["simulation", "rtol"]
