"""The release is written once (cli/auditpipe/__init__.py): the Maven modules, the installed package and
CHANGELOG.md agree with it, and `auditpipe --version` says it with the commit."""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from importlib import metadata

from helpers.compose_project import ENV, env_file

from auditpipe import __version__, paths, version

POM = "{http://maven.apache.org/POM/4.0.0}"


def test_the_version_is_semantic():
    assert re.fullmatch(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?", __version__)


def test_every_maven_module_has_the_release_s_version():
    poms = sorted((paths.REPO / "pipelines").glob("**/pom.xml"))
    assert len(poms) >= 4
    for pom in poms:
        root = ET.parse(pom).getroot()
        own = root.find(f"{POM}version")
        parent = root.find(f"{POM}parent/{POM}version")
        for element in (own, parent):
            if element is not None:
                assert element.text == __version__, f"{pom.relative_to(paths.REPO)}: {element.text}"


def test_the_installed_package_reads_its_version_from_the_one_place():
    assert metadata.version("auditpipe") == __version__


def test_the_changelog_has_a_section_for_what_comes_next_or_this_release():
    text = (paths.REPO / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert sections, "CHANGELOG.md has no release section"
    assert sections[0] in ("Unreleased", __version__), sections[0]
    for released in sections[1:]:
        assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", released.split(" ")[0]), released


def test_version_names_the_release_and_the_commit():
    out = subprocess.run([str(paths.REPO / "auditpipe"), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    head = subprocess.run(["git", "-C", str(paths.REPO), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    assert out.stdout.startswith(f"auditpipe {__version__} (commit {head}"), out.stdout
    assert version.describe().startswith(f"auditpipe {__version__}")


def test_the_deployment_builds_its_images_under_the_release_s_version():
    assert env_file(ENV)["AUDITPIPE_VERSION"] == __version__


def test_a_release_s_commit_names_the_digest_of_the_job_jar_its_code_builds():
    """On a release's commit .env holds the job jar's SHA-256 (the deployment's image refuses other
    bytes: deploy/docker/check-job-jar) and CHANGELOG.md's section of the release states it; between
    releases it is empty."""
    import hashlib

    from auditpipe import bundle

    digest = env_file(ENV)["AUDITPIPE_JOB_JAR_SHA256"]
    if not digest:
        text = (paths.REPO / "CHANGELOG.md").read_text()
        assert re.search(r"^## \[Unreleased\]", text, re.M), "a release's commit sets AUDITPIPE_JOB_JAR_SHA256"
        return
    assert re.fullmatch(r"[0-9a-f]{64}", digest), digest
    section = re.split(r"^## ", (paths.REPO / "CHANGELOG.md").read_text(), flags=re.M)[1]
    assert section.startswith(f"[{__version__}]") and digest in section, "CHANGELOG.md states the release's digest"
    jar = paths.REPO / bundle.JOB_JAR
    assert hashlib.sha256(jar.read_bytes()).hexdigest() == digest, f"{jar} is not the release's jar"
