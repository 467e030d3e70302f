#!/usr/bin/env python3
"""Checks spack/packages/baton/package.py without Spack.

1. The file parses.
2. It runs against a small stand-in for `spack.package`, and cmake_args() is evaluated for several
   specs: every -D it produces names a CMake cache option that Baton's CMake really declares
   (or a CMake/FindMPI built-in), and every variant reaches CMake with its value (no literal strings
   where a variant was meant).
3. cuda_arch and amdgpu_target are forwarded to Kokkos for every value.

usage: check_recipe.py <package.py> <baton source dir>
"""
import ast
import pathlib
import re
import sys
import types

recipe_path = pathlib.Path(sys.argv[1])
source_dir = pathlib.Path(sys.argv[2])
failures = []


def fail(message):
    failures.append(message)


# --- 1. parse -----------------------------------------------------------------------------------
text = recipe_path.read_text()
ast.parse(text, filename=str(recipe_path))

# --- CMake options Baton declares ---------------------------------------------------------------
cmake_text = "\n".join(p.read_text() for p in [source_dir / "CMakeLists.txt", *sorted((source_dir / "share" / "cmake").glob("*.cmake"))])
declared = set(re.findall(r"option\(\s*([A-Za-z_0-9]+)", cmake_text))
declared |= set(re.findall(r"set\(\s*([A-Za-z_0-9]+)\s+[^)]*\bCACHE\b", cmake_text))
builtin = re.compile(r"^(CMAKE_[A-Z_]+|MPI_(C|CXX)_COMPILER|MPIEXEC_EXECUTABLE|Kokkos_ROOT)$")

# --- 2. a stand-in for spack.package -------------------------------------------------------------
directives = {"variant": [], "depends_on": [], "conflicts": [], "version": []}


def recorder(kind):
    def record(*args, **kwargs):
        directives[kind].append((args, kwargs))
    return record


class Spec:
    """Only what the recipe uses: variants, satisfies('+x' / 'x=v'), spec['dep'] attributes."""

    def __init__(self, variants):
        self.variants = variants

    def satisfies(self, constraint):
        ok = True
        for token in constraint.split():
            if token.startswith("+"):
                ok &= bool(self.variants.get(token[1:]))
            elif token.startswith("~"):
                ok &= not self.variants.get(token[1:])
            elif "=" in token:
                name, value = token.split("=", 1)
                ok &= str(self.variants.get(name)) == value
        return ok

    def __contains__(self, constraint):
        return self.satisfies(constraint)

    def __getitem__(self, name):
        return types.SimpleNamespace(mpicxx="/mpi/bin/mpicxx", mpicc="/mpi/bin/mpicc",
                                     kokkos_cxx="/kokkos/bin/nvcc_wrapper",
                                     hipcc="/rocm/bin/hipcc")


class CMakePackage:
    run_tests = False

    def __init__(self, spec):
        self.spec = spec

    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"

    def define_from_variant(self, name, variant):
        if variant not in self.spec.variants:
            raise KeyError(f"define_from_variant({name!r}, {variant!r}): no such variant")
        return self.define(name, self.spec.variants[variant])


class CudaPackage:
    cuda_arch_values = ("70", "80", "90")


class ROCmPackage:
    amdgpu_targets = ("gfx90a", "gfx942")


fake = types.ModuleType("spack.package")
for name, value in dict(CMakePackage=CMakePackage, CudaPackage=CudaPackage, ROCmPackage=ROCmPackage,
                        maintainers=lambda *a: None, license=lambda *a, **k: None,
                        **{k: recorder(k) for k in directives}).items():
    setattr(fake, name, value)
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = fake
namespace = {}
exec(compile(text, str(recipe_path), "exec"), namespace)
Baton = namespace["Baton"]

variants = {args[0]: kwargs for args, kwargs in directives["variant"]}
for needed in ("apps", "shared", "gpu_aware_mpi"):
    if needed not in variants:
        fail(f"variant {needed!r} is missing")


def cmake_args(**overrides):
    values = {name: kw.get("default") for name, kw in variants.items()}
    values.update(cuda=False, rocm=False, cuda_arch="none", amdgpu_target="none")
    values.update(overrides)
    return Baton(Spec(values)).cmake_args()


def as_dict(args):
    out = {}
    for arg in args:
        match = re.fullmatch(r"-D([A-Za-z_0-9]+)(?::[A-Z]+)?=(.*)", arg)
        if not match:
            fail(f"cmake_args() gave {arg!r}, not -DNAME=VALUE")
            continue
        out[match.group(1)] = match.group(2)
    return out


default = as_dict(cmake_args())
for name in default:
    if name not in declared and not builtin.match(name):
        fail(f"the recipe sets {name}, which Baton's CMake does not declare")

# Every variant reaches CMake with its value: flip it and the argument must follow.
flips = {"apps": [(True, "ON"), (False, "OFF")], "shared": [(True, "ON"), (False, "OFF")],
         "gpu_aware_mpi": [(v, v) for v in variants.get("gpu_aware_mpi", {}).get("values", ())]}
forwarded = {"apps": "BATON_ENABLE_APPS", "shared": "BUILD_SHARED_LIBS", "gpu_aware_mpi": "BATON_GPU_AWARE_MPI"}
for variant, cases in flips.items():
    for value, expected in cases:
        got = as_dict(cmake_args(**{variant: value})).get(forwarded[variant])
        if got != expected:
            fail(f"variant {variant}={value}: expected -D{forwarded[variant]}={expected}, got {got}")

# The CMake option accepts exactly the variant's values.
strings = re.search(r"BATON_GPU_AWARE_MPI\s+PROPERTY\s+STRINGS\s+([A-Z ]+)\)", cmake_text)
if not strings or set(strings.group(1).split()) != set(variants["gpu_aware_mpi"]["values"]):
    fail("gpu_aware_mpi values differ from BATON_GPU_AWARE_MPI's STRINGS")

if "CMAKE_CXX_COMPILER" not in as_dict(cmake_args(cuda=True, cuda_arch="80")):
    fail("+cuda does not select Kokkos' compiler wrapper")
if as_dict(cmake_args(rocm=True, amdgpu_target="gfx90a")).get("CMAKE_CXX_COMPILER") != "/rocm/bin/hipcc":
    fail("+rocm does not compile with hipcc")
if as_dict(cmake_args(tests=True)).get("BATON_ENABLE_TESTS") is None:
    fail("BATON_ENABLE_TESTS is not set")

# --- 3. architectures forwarded to Kokkos --------------------------------------------------------
deps = [(args[0], kwargs.get("when", "")) for args, kwargs in directives["depends_on"]]
for arch in CudaPackage.cuda_arch_values:
    if (f"kokkos cuda_arch={arch}", f"+cuda cuda_arch={arch}") not in deps:
        fail(f"cuda_arch={arch} is not forwarded to kokkos")
for target in ROCmPackage.amdgpu_targets:
    if (f"kokkos amdgpu_target={target}", f"+rocm amdgpu_target={target}") not in deps:
        fail(f"amdgpu_target={target} is not forwarded to kokkos")
if not any(spec.startswith("kokkos@3.4:") for spec, _ in deps):
    fail("kokkos@3.4: is not required")

if failures:
    print("spack recipe check FAILED:")
    for f in failures:
        print("  -", f)
    sys.exit(1)
print(f"spack recipe check: parsed, {len(default)} CMake arguments checked, "
      f"{len(variants)} variants forwarded, {len(CudaPackage.cuda_arch_values) + len(ROCmPackage.amdgpu_targets)} GPU targets forwarded")
