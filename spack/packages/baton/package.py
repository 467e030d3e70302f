# Spack recipe for Baton. Use it from this repository:
#   spack repo add <baton>/spack
#   spack install baton            (or: spack develop --path <baton> baton@main; spack install)
from spack.package import *


class Baton(CMakePackage, CudaPackage, ROCmPackage):
    """Baton: MPI transport, collectives, roles, timing reports and Kokkos pipelines for HPC codes."""

    # No public release is published yet: versions come from a checkout (`spack develop`) or from the
    # project's git server, which the site sets with `spack config add` or by editing `git`.
    git = "https://example.org/baton.git"

    maintainers("baton-developers")
    license("BSD-3-Clause")

    version("main", branch="main")

    variant("apps", default=True, description="Build the apps (baton-info, baton-pipeline, ...)")
    variant("shared", default=True, description="Build a shared library")
    variant(
        "gpu_aware_mpi",
        default="AUTO",
        values=("AUTO", "ON", "OFF"),
        multi=False,
        description="Default for GPU-aware MPI: AUTO asks the MPI at run time; "
        "BATON_GPU_AWARE=0|1 still overrides",
    )

    depends_on("cmake@3.18:", type="build")
    depends_on("mpi")
    depends_on("kokkos@3.4:")
    depends_on("boost+program_options", when="+apps")
    depends_on("doctest", type="test")
    depends_on("python@3:", type="test")

    # One GPU backend at a time, handed to Kokkos with the same architecture.
    conflicts("+cuda", when="+rocm", msg="Baton builds for one GPU backend at a time")
    depends_on("kokkos~cuda", when="~cuda")
    depends_on("kokkos~rocm", when="~rocm")
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    depends_on("kokkos+rocm", when="+rocm")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    for _target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos amdgpu_target={_target}", when=f"+rocm amdgpu_target={_target}")

    # Device buffers go straight to MPI unless gpu_aware_mpi=OFF (host staging): the MPI must then
    # be built for the GPU.
    for _mpi in ("openmpi", "mpich", "mvapich2"):
        for _when in ("AUTO", "ON"):
            conflicts(f"^{_mpi}~cuda", when=f"+cuda gpu_aware_mpi={_when}",
                      msg="+cuda needs a CUDA-aware MPI, or gpu_aware_mpi=OFF for host staging")
    for _when in ("AUTO", "ON"):
        conflicts("^mpich~rocm", when=f"+rocm gpu_aware_mpi={_when}",
                  msg="+rocm needs MPICH built with ROCm, or gpu_aware_mpi=OFF for host staging")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("BATON_ENABLE_APPS", "apps"),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("BATON_GPU_AWARE_MPI", "gpu_aware_mpi"),
            self.define("BATON_ENABLE_TESTS", self.run_tests),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
        ]
        if spec.satisfies("+cuda"):
            # Kokkos' nvcc_wrapper compiles Baton's CUDA-enabled Kokkos code.
            args.append(self.define("CMAKE_CXX_COMPILER", spec["kokkos"].kokkos_cxx))
        if spec.satisfies("+rocm"):
            # Kokkos' HIP backend is compiled with hipcc.
            args.append(self.define("CMAKE_CXX_COMPILER", spec["hip"].hipcc))
        return args
