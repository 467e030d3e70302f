# Spack recipe for Baton (package API v2, Spack 1.x). Use it from this repository:
#   spack repo add <baton>/spack/spack_repo/baton
#   spack install baton            (or: spack develop --path <baton> baton@main; spack install)
# Spack 0.x: the same recipe in package API v1 is spack/packages/baton/package.py
# (spack repo add <baton>/spack). Keep the two recipes' logic the same.
import glob
import os
import re

from spack_repo.builtin.build_systems.cmake import CMakePackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *


def recorded_kokkos_cxx(prefix):
    """The Kokkos_CXX_COMPILER that an installed Kokkos' CMake configuration records, or None."""
    for pattern in ("lib*/cmake/Kokkos", "lib*/*/cmake/Kokkos"):
        for folder in sorted(glob.glob(os.path.join(prefix, pattern))):
            for name in ("KokkosConfigCommon.cmake", "KokkosConfig.cmake"):
                path = os.path.join(folder, name)
                if not os.path.isfile(path):
                    continue
                with open(path) as f:
                    match = re.search(
                        r'set\(\s*Kokkos_CXX_COMPILER\s+"([^"]+)"', f.read(), re.IGNORECASE
                    )
                if match and os.path.isfile(match.group(1)):
                    return match.group(1)
    return None


class Baton(CMakePackage, CudaPackage, ROCmPackage):
    """Baton: MPI transport, collectives, roles, timing reports and Kokkos pipelines for HPC
    codes."""

    # No public release is published yet: versions come from a checkout (`spack develop`) or from
    # the project's git server, which the site sets by editing `git` (both URLs are placeholders).
    homepage = "https://example.org/baton"
    git = "https://example.org/baton.git"

    maintainers("baton-developers")
    license("BSD-3-Clause")

    version("main", branch="main")

    variant("apps", default=True, description="Build the apps (baton-info, baton-pipeline, ...)")
    variant("shared", default=True, description="Build a shared library")
    variant(
        "torch",
        default=False,
        description="TorchScript models through libtorch (a plugin opened when a model is loaded)",
    )
    variant(
        "gpu_aware_mpi",
        default="AUTO",
        values=("AUTO", "ON", "OFF"),
        multi=False,
        description="Default for GPU-aware MPI: AUTO asks the MPI at run time; "
        "BATON_GPU_AWARE=0|1 still overrides",
    )

    # Baton's CMake enables C++ and C (FindMPI's C component).
    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("mpi")
    depends_on("kokkos@3.4:")
    depends_on("boost@1.66:+program_options", when="+apps")
    depends_on("py-torch", when="+torch")
    depends_on("doctest", type="test")
    depends_on("python@3:", type="test")
    # install_downstream builds a program with `pkg-config --cflags --libs baton`.
    depends_on("pkgconfig", type="test")

    # One GPU backend at a time, handed to Kokkos with the same architecture.
    conflicts("+cuda", when="+rocm", msg="Baton builds for one GPU backend at a time")
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs cuda_arch=<arch> (given to Kokkos)")
    conflicts(
        "+rocm", when="amdgpu_target=none", msg="+rocm needs amdgpu_target=<gfx> (given to Kokkos)"
    )
    depends_on("kokkos~cuda", when="~cuda")
    depends_on("kokkos~rocm", when="~rocm")
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    depends_on("kokkos+rocm", when="+rocm")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")
    # Baton's kernels are KOKKOS_LAMBDAs: Kokkos 4 and older need +cuda_lambda (always on in 5).
    requires(
        "^kokkos+cuda_lambda",
        when="+cuda ^kokkos@:4",
        msg="Baton uses KOKKOS_LAMBDA: +cuda needs kokkos+cuda_lambda (Kokkos 4 and older)",
    )

    # gpu_aware_mpi=ON passes device buffers to MPI without asking it, so the MPI must be built
    # for the GPU. AUTO asks the MPI at run time (host staging when it is not GPU-aware) and OFF
    # always stages: both work with any MPI. Only MPIs with a cuda or rocm variant are checked
    # (current Spack's mvapich2 has none).
    for _mpi in ("openmpi", "mpich"):
        conflicts(
            f"^{_mpi}~cuda",
            when="+cuda gpu_aware_mpi=ON",
            msg="gpu_aware_mpi=ON needs a CUDA-aware MPI; use AUTO (asks the MPI at run time) "
            "or OFF (host staging)",
        )
    conflicts(
        "^mpich~rocm",
        when="+rocm gpu_aware_mpi=ON",
        msg="gpu_aware_mpi=ON needs MPICH built with ROCm; use AUTO (asks the MPI at run time) "
        "or OFF (host staging)",
    )

    def kokkos_compiler(self):
        """The compiler for Baton's Kokkos code: the one Kokkos' recipe gives (its nvcc_wrapper
        with +wrapper) or, for an external Kokkos (which has no kokkos-nvcc-wrapper dependency),
        the Kokkos_CXX_COMPILER that its CMake configuration records."""
        kokkos = self.spec["kokkos"]
        if kokkos.external:
            recorded = recorded_kokkos_cxx(kokkos.prefix)
            if recorded:
                return recorded
        return self["kokkos"].kokkos_cxx

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("BATON_ENABLE_APPS", "apps"),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("BATON_GPU_AWARE_MPI", "gpu_aware_mpi"),
            self.define_from_variant("BATON_ENABLE_TORCH", "torch"),
            self.define("BATON_ENABLE_TESTS", self.run_tests),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
        ]
        if self.run_tests and spec.dependencies("python"):
            # The tests' Python checks run with the python dependency, not a python3 from PATH.
            # (A spec concretized without tests has none: `spack dev-build --test=root`.)
            args.append(self.define("Python3_EXECUTABLE", spec["python"].command.path))
            if spec.satisfies("+torch"):  # the test models are written by py-torch's python
                args.append(self.define("BATON_TORCH_PYTHON", spec["python"].command.path))
        if spec.satisfies("+cuda"):
            # Kokkos' compiler (nvcc_wrapper) compiles Baton's CUDA-enabled Kokkos code.
            args.append(self.define("CMAKE_CXX_COMPILER", self.kokkos_compiler()))
            # nvcc_wrapper's own default architecture (sm_70) is one that CUDA 13 rejects, and it
            # is what CMake's compiler checks get: name the spec's.
            for arch in CudaPackage.cuda_arch_values:
                if spec.satisfies(f"cuda_arch={arch}"):
                    args.append(self.define("CMAKE_CXX_FLAGS", f"-arch=sm_{arch}"))
                    break
        if spec.satisfies("+rocm"):
            # Kokkos' HIP backend is compiled with hipcc.
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        return args
