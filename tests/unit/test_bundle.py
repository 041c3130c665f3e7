"""What an installed wheel carries (cli/auditpipe/bundle.py) and how it finds its configuration.
tests/e2e/deployment/test_wheel.py builds, installs and runs the wheel itself."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from auditpipe import bundle, config, paths

POM = "{http://maven.apache.org/POM/4.0.0}"
LISTING = """
The following files have been resolved:
   org.apache.flink:flink-core:jar:2.2.0:provided -- module flink.core (auto)
   org.rocksdb:rocksdbjni:jar:linux64:9.10.0:provided -- module rocksdbjni
   org.mongodb:bson:jar:5.8.1:compile -- module org.mongodb.bson
"""


def test_the_runtime_pom_lists_each_provided_jar_and_none_of_their_own_dependencies():
    root = ET.fromstring(bundle.runtime_pom(LISTING, "3.8.1"))
    deps = [{c.tag[len(POM):]: c.text for c in d if c.tag != f"{POM}exclusions"} for d in root.iter(f"{POM}dependency")]
    assert deps == [{"groupId": "org.apache.flink", "artifactId": "flink-core", "version": "2.2.0"},
                    {"groupId": "org.rocksdb", "artifactId": "rocksdbjni", "version": "9.10.0", "classifier": "linux64"}]
    excluded = [[(e.find(f"{POM}groupId").text, e.find(f"{POM}artifactId").text) for e in d.iter(f"{POM}exclusion")]
                for d in root.iter(f"{POM}dependency")]
    assert excluded == [[("*", "*")], [("*", "*")]]
    plugin = root.find(f"{POM}build/{POM}pluginManagement/{POM}plugins/{POM}plugin")
    assert plugin.find(f"{POM}version").text == "3.8.1"


def test_a_listing_without_a_provided_jar_is_an_error():
    with pytest.raises(ValueError):
        bundle.runtime_pom("   org.mongodb:bson:jar:5.8.1:compile\n", "3.8.1")


def test_the_dependency_plugin_version_is_the_one_the_build_pins():
    assert bundle._dependency_plugin_version(paths.REPO / "pipelines") == "3.8.1"


def test_what_the_bundle_copies_exists_in_the_checkout():
    assert paths.IN_CHECKOUT
    for name in bundle.COPIED:
        assert (paths.REPO / name).exists(), name


def test_an_installed_wheel_reads_the_working_folder_s_configuration_else_its_defaults(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "IN_CHECKOUT", False)
    monkeypatch.delenv(config.ENV_CONFIG, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    defaults = config.load()
    assert defaults.file == paths.DEFAULT_CONFIG
    assert defaults.state_dir.is_relative_to(tmp_path / "data" / "auditpipe")
    (tmp_path / "auditpipe.yaml").write_text("state_dir: here\n")
    local = config.load()
    assert local.file == tmp_path / "auditpipe.yaml" and local.state_dir == tmp_path / "here"


def test_work_on_the_repository_s_own_files_refuses_outside_a_checkout(monkeypatch):
    from auditpipe.errors import UserError

    monkeypatch.setattr(paths, "IN_CHECKOUT", False)
    with pytest.raises(UserError, match="checkout"):
        paths.require_checkout("test")
