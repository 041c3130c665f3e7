"""The wheel's build step beyond pyproject.toml: the bundle (cli/auditpipe/bundle.py) of schemas,
collectors, the local stack's poms, the default configuration, the job jar and its Flink runtime's
pom, written into the package as auditpipe/_bundle. An editable install runs from the checkout,
which has them all, and gets no bundle."""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildPyWithBundle(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        spec = importlib.util.spec_from_file_location("auditpipe_bundle", HERE / "cli" / "auditpipe" / "bundle.py")
        bundle = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bundle)
        bundle.stage(HERE, Path(self.build_lib) / "auditpipe" / "_bundle")


setup(cmdclass={"build_py": BuildPyWithBundle})
