# Finds Baton's dependencies for Baton's own build. BatonConfig.cmake finds them again for users:
# MPI (C++ only, with the MPI compiler Baton was built with unless the user chose one), Kokkos (with
# the recorded Kokkos_DIR, the same version check and include fix), and the CUDA Toolkit if used.

# Debian-style side-by-side MPIs (mpicxx.mpich, mpicxx.openmpi): when the C++ wrapper names one,
# take the C wrapper and the launcher of the same family, so that tests never mix two MPIs.
if(MPI_CXX_COMPILER MATCHES "\\.(mpich|openmpi)$")
  set(_baton_mpi_suffix ${CMAKE_MATCH_1})
  get_filename_component(_baton_mpi_dir "${MPI_CXX_COMPILER}" DIRECTORY)
  if(NOT MPI_C_COMPILER)
    find_program(MPI_C_COMPILER NAMES mpicc.${_baton_mpi_suffix} HINTS ${_baton_mpi_dir})
  endif()
  if(NOT MPIEXEC_EXECUTABLE)
    find_program(MPIEXEC_EXECUTABLE NAMES mpiexec.${_baton_mpi_suffix} mpirun.${_baton_mpi_suffix}
                 HINTS ${_baton_mpi_dir})
  endif()
endif()

# MPI: the C API, called from C++. The deprecated C++ bindings are never needed.
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Baton uses only MPI's C API")
find_package(MPI 3.0 REQUIRED COMPONENTS C CXX)

# Kokkos 3.4 to 5.x. No version argument: Kokkos' version file only accepts its own major version.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "Baton needs Kokkos 3.4 or newer; found ${Kokkos_VERSION}")
endif()
include(BatonKokkosFixup)
baton_fix_kokkos_include_dirs()

# CUDA Toolkit only when Kokkos was built with CUDA (pinned staging buffers, NVTX ranges).
set(BATON_HAVE_CUDA OFF)
if(Kokkos_ENABLE_CUDA OR "CUDA" IN_LIST Kokkos_DEVICES)
  find_package(CUDAToolkit REQUIRED)
  set(BATON_HAVE_CUDA ON)
endif()

# libtorch for Baton::torch (TorchScript models), per BATON_ENABLE_TORCH.
set(BATON_HAVE_TORCH OFF)
if(BATON_ENABLE_TORCH STREQUAL "ON")
  find_package(Torch REQUIRED)
  set(BATON_HAVE_TORCH ON)
elseif(BATON_ENABLE_TORCH STREQUAL "AUTO")
  find_package(Torch QUIET)
  set(BATON_HAVE_TORCH ${Torch_FOUND})
endif()
if(BATON_HAVE_TORCH)
  message(STATUS "Baton: TorchScript models through libtorch ${Torch_VERSION}")
else()
  message(STATUS "Baton: no libtorch (BATON_ENABLE_TORCH=${BATON_ENABLE_TORCH}): Baton::torch "
                 "reports that it was built without it")
endif()
