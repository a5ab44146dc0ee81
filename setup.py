"""Build hook for the optional C kernels; all metadata lives in pyproject.toml.

``blocks/robot/_ckernels.c`` uses only the CPython API (buffer protocol, no numpy headers).
Compiling it is optional: when there is no working compiler, ``OptionalBuildExt`` warns and
the installation goes on without it, and ``blocks.robot.backend`` falls back to numba, then to
plain Python.
"""

import warnings

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError

# compiler missing or failing: distutils errors (exec, platform, compile, link) and OS errors
_FAILURES = (BaseError, CCompilerError, OSError)


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compilation into a warning and skips that extension."""

    def run(self):
        try:
            super().run()
        except _FAILURES as e:      # raised before any extension, e.g. no usable compiler
            for ext in list(self.extensions):
                self._skip(ext, e)

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        for ext in list(self.extensions):
            if self.compiler.compiler_type == "unix":
                # the kernels follow _kernels.py operation by operation: no fused multiply-add
                ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
            try:
                self.build_extension(ext)
            except _FAILURES as e:
                self._skip(ext, e)

    def _skip(self, ext, error):
        warnings.warn(f"could not compile {ext.name} ({error}); blocksim will use numba or plain "
                      "Python for the robot kernels", RuntimeWarning, stacklevel=1)
        self.extensions.remove(ext)          # nothing to copy in place or to list as output


setup(
    ext_modules=[Extension("blocks.robot._ckernels", ["blocks/robot/_ckernels.c"],
                           depends=["blocks/robot/_kernel_rows.c"])],
    cmdclass={"build_ext": OptionalBuildExt},
)
