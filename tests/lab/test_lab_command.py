"""The command behind `make lab`: what JupyterLab is started with, for each role."""
import pytest

from scripts import lab as lab_script


@pytest.fixture
def lab():
    return lab_script


@pytest.mark.parametrize("role", ["learner", "instructor"])
def test_jupyterlab_listens_on_loopback_only(lab, role):
    assert "--ServerApp.ip=127.0.0.1" in lab.lab_command(role, [])


@pytest.mark.parametrize("user, allowed", [(0, True), (1000, False)])
def test_root_is_allowed_only_when_running_as_root(lab, monkeypatch, user, allowed):
    monkeypatch.setattr(lab.os, "geteuid", lambda: user)
    assert ("--allow-root" in lab.lab_command("learner", [])) is allowed


def test_a_learner_opens_in_the_exercises_an_instructor_at_the_top(lab):
    assert "--ContentsManager.preferred_dir=exercises" in lab.lab_command("learner", [])
    assert "--ContentsManager.preferred_dir=" in lab.lab_command("instructor", [])


def test_only_the_learner_gets_the_config_that_hides_the_instructor_tools(lab):
    learner = lab.lab_environment("learner", {"JUPYTER_CONFIG_PATH": "/mine"})
    assert learner["JUPYTER_CONFIG_PATH"].split(":") == [str(lab.LEARNER_CONFIG), "/mine"]
    assert "JUPYTER_CONFIG_PATH" not in lab.lab_environment("instructor", {})


def test_the_kernels_import_this_checkouts_autograder(lab):
    env = lab.lab_environment("learner", {"PYTHONPATH": "/elsewhere"})
    assert env["PYTHONPATH"].split(":") == [str(lab.ROOT), "/elsewhere"]


def test_the_learner_config_disables_every_instructor_plugin_and_keeps_validate(lab):
    import json
    disabled = json.loads((lab.LEARNER_CONFIG / "labconfig" / "page_config.json").read_text())
    names = {name for name, off in disabled["disabledExtensions"].items() if off}
    assert names == {f"@jupyter/nbgrader:{plugin}" for plugin in (
        "formgrader", "create-assignment", "course-list", "assignment-list", "menu")} \
        | {"@jupyterlab/apputils-extension:announcements"}  # no "Jupyter news?" prompt
    server = json.loads((lab.LEARNER_CONFIG / "jupyter_server_config.json").read_text())
    extensions = server["ServerApp"]["jpserver_extensions"]
    assert "nbgrader.server_extensions.validate_assignment" not in extensions
    assert not any(extensions.values())
