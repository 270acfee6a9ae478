"""Stand-in of `launch_ros.substitutions`: FindPackageShare, FindPackagePrefix,
ExecutableInPackage.

Packages are found as ament_index_python finds them: the first prefix of the context's
`ament_prefix_path` (AMENT_PREFIX_PATH order) holding the marker file
`<prefix>/share/ament_index/resource_index/packages/<package>` is the package's prefix; its
share directory is `<prefix>/share/<package>`; its executables are in `<prefix>/lib/<package>`
(launch_ros's ExecutableInPackage: `shutil.which(executable, path=<that directory>)`, so the
file must exist and be executable).
"""

import os
import shutil

from launch import Substitution, SubstitutionFailure, normalize_to_list_of_substitutions
from launch import perform_substitutions


class PackageNotFoundError(KeyError):
    """As ament_index_python.packages.PackageNotFoundError."""


def package_prefix(context, package):
    """The install prefix of `package` in the context's prefixes (first match)."""
    for prefix in context.ament_prefix_path:
        marker = os.path.join(prefix, "share", "ament_index", "resource_index", "packages", package)
        if os.path.isfile(marker):
            return prefix
    raise PackageNotFoundError(
        f"package '{package}' not found, searching: {context.ament_prefix_path}"
    )


class FindPackagePrefix(Substitution):
    """The install prefix of a package."""

    def __init__(self, package):
        self.package = normalize_to_list_of_substitutions(package)

    def find(self, context, package):
        return package_prefix(context, package)

    def perform(self, context):
        return self.find(context, perform_substitutions(context, self.package))

    def describe(self):
        pkg = " + ".join(s.describe() for s in self.package)
        return f"{type(self).__name__}(pkg={pkg})"


class FindPackageShare(FindPackagePrefix):
    """The share directory of a package: `<prefix>/share/<package>`."""

    def find(self, context, package):
        return os.path.join(package_prefix(context, package), "share", package)


class ExecutableInPackage(FindPackagePrefix):
    """`<prefix>/lib/<package>/<executable>`, which must be an executable file."""

    def __init__(self, *, executable, package):
        super().__init__(package)
        self.executable = normalize_to_list_of_substitutions(executable)

    def perform(self, context):
        package = perform_substitutions(context, self.package)
        executable = perform_substitutions(context, self.executable)
        prefix = package_prefix(context, package)
        libexec = os.path.join(prefix, "lib", package)
        if not os.path.exists(libexec):
            raise SubstitutionFailure(
                f"package '{package}' found at '{prefix}', but libexec directory "
                f"'{libexec}' does not exist"
            )
        found = shutil.which(executable, path=libexec)
        if found is None:
            raise SubstitutionFailure(
                f"executable '{executable}' not found on the libexec directory '{libexec}'"
            )
        return found


__all__ = ["ExecutableInPackage", "FindPackagePrefix", "FindPackageShare", "PackageNotFoundError"]
