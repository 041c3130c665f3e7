"""What an installed auditpipe carries besides its Python code, and how a checkout makes it.

A checkout runs with the files around it (schemas/, collectors/, deploy/local/, auditpipe.yaml and
the job jar it builds from pipelines/). The wheel carries the same files in the package's
``_bundle`` folder (paths.py finds either), plus the Flink runtime's pom: the job's provided
dependencies written as a pom of their own, which `auditpipe setup` resolves from Maven Central
without the job's sources. setup.py calls ``stage`` when it builds the wheel.

Only the standard library here: setup.py runs it in the build's own environment.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

#: the folders and files of a checkout that an installed auditpipe reads, as they sit in the checkout
COPIED = ("schemas", "collectors", "deploy/local", "auditpipe.yaml")
JOB_JAR = "pipelines/flink-job/target/auditpipe-flink-job.jar"
#: in the bundle: the Flink runtime's pom and the commit the wheel was built from
RUNTIME_POM = "flink-runtime.pom.xml"
COMMIT = "commit"
_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _dependency_plugin_version(pipelines: Path) -> str:
    parent = ET.parse(pipelines / "pom.xml").getroot()
    for plugin in parent.findall("m:build/m:pluginManagement/m:plugins/m:plugin", _NS):
        if plugin.findtext("m:artifactId", namespaces=_NS) == "maven-dependency-plugin":
            return plugin.findtext("m:version", namespaces=_NS)
    raise ValueError(f"{pipelines / 'pom.xml'} pins no maven-dependency-plugin version")


def runtime_pom(listing: str, plugin_version: str) -> str:
    """The Flink runtime's pom from ``dependency:list -DincludeScope=provided`` of flink-job (what a
    Flink cluster brings and the local stack puts on the job's classpath): every resolved jar by its
    coordinates, none of their own dependencies, so resolving it copies exactly those jars."""
    rows = []
    for line in listing.splitlines():
        m = re.match(r"\s+([^\s:]+):([^\s:]+):jar:(?:([^\s:]+):)?([^\s:]+):provided\b", line)
        if m:
            group, artifact, classifier, version = m.groups()
            rows.append(f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
                        f"<version>{version}</version>" + (f"<classifier>{classifier}</classifier>" if classifier else "")
                        + "<exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>"
                        "</dependency>\n")
    if not rows:
        raise ValueError("the dependency listing names no provided jar")
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<!-- the Flink runtime of the job jar beside it: generated from flink-job's provided dependencies "
            "by cli/auditpipe/bundle.py -->\n"
            "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
            "  <modelVersion>4.0.0</modelVersion>\n"
            "  <groupId>io.auditpipe.local</groupId>\n  <artifactId>flink-runtime</artifactId>\n"
            "  <version>1</version>\n  <packaging>pom</packaging>\n"
            "  <dependencies>\n" + "".join(rows) + "  </dependencies>\n"
            "  <build><pluginManagement><plugins><plugin><groupId>org.apache.maven.plugins</groupId>"
            f"<artifactId>maven-dependency-plugin</artifactId><version>{plugin_version}</version>"
            "</plugin></plugins></pluginManagement></build>\n"
            "</project>\n")


def build_job(checkout: Path) -> tuple[Path, str]:
    """Builds the job jar (tests skipped) and returns it with its Flink runtime's pom."""
    pipelines = checkout / "pipelines"
    listing = pipelines / "flink-job" / "target" / "flink-runtime.txt"
    # relative: each module of the run writes its own listing; flink-job's is the one read
    subprocess.run(["mvn", "-q", "-B", "-f", str(pipelines / "pom.xml"), "-pl", "flink-job", "-am", "-DskipTests",
                    "package", "dependency:list", "-DincludeScope=provided", "-DoutputFile=target/flink-runtime.txt"],
                   check=True)
    return checkout / JOB_JAR, runtime_pom(listing.read_text(), _dependency_plugin_version(pipelines))


def stage(checkout: Path, dest: Path) -> None:
    """Writes the bundle of ``checkout`` into ``dest`` (the wheel's auditpipe/_bundle)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in COPIED:
        src = checkout / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    jar, pom = build_job(checkout)
    shutil.copy2(jar, dest / Path(JOB_JAR).name)
    (dest / RUNTIME_POM).write_text(pom)
    (dest / COMMIT).write_text(_commit(checkout))


def _commit(checkout: Path) -> str:
    """The commit as `auditpipe --version` says it (version.py), "" outside a git checkout."""
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return ""
    changed = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True)
    return head.stdout.strip() + (", with uncommitted changes" if changed.stdout.strip() else "")
