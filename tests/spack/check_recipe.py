#!/usr/bin/env python3
"""Checks Baton's two Spack recipes without Spack:

  spack/packages/baton/package.py                  package API v1 (Spack 0.x)
  spack/spack_repo/baton/packages/baton/package.py package API v2 (Spack 1.x), with its repo.yaml

1. Each file parses and keeps to Spack's 99-column limit (`spack style` runs black and flake8 with it).
2. It runs against a small stand-in for `spack.package` (and, for v2, `spack_repo.builtin.build_systems`),
   and cmake_args() is evaluated for several specs: every -D it produces names a CMake cache option that
   Baton's CMake really declares (or a CMake/FindMPI/FindPython built-in), and every variant reaches CMake
   with its value (no literal strings where a variant was meant).
3. Directives: cuda_arch and amdgpu_target are forwarded to Kokkos for every value; +cuda and +rocm
   without an architecture conflict; Kokkos 4 and older must have +cuda_lambda with +cuda; the
   GPU-aware-MPI conflicts apply to gpu_aware_mpi=ON only (AUTO asks the MPI at run time, so a conflict
   there would make the solver switch to OFF instead of rejecting the spec) and name only variants that
   both Spack generations' MPI recipes have; test dependencies; a homepage.
4. v2 forms: build systems imported from spack_repo.builtin.build_systems, compilers as dependencies
   (c, cxx), `self["kokkos"]` for Kokkos' kokkos_cxx property.
5. Both recipes have the same directives (v2 adds the compiler dependencies) and give the same CMake
   arguments.

usage: check_recipe.py <baton source dir> [<package.py> ...]    (default: both recipes)
"""
import ast
import pathlib
import re
import sys
import tempfile
import types

source_dir = pathlib.Path(sys.argv[1])
V1 = source_dir / "spack" / "packages" / "baton" / "package.py"
V2 = source_dir / "spack" / "spack_repo" / "baton" / "packages" / "baton" / "package.py"
recipes = [pathlib.Path(p) for p in sys.argv[2:]] or [V1, V2]
failures = []


def fail(message):
    failures.append(message)


# --- CMake options Baton declares ---------------------------------------------------------------
cmake_text = "\n".join(
    p.read_text()
    for p in [
        source_dir / "CMakeLists.txt",
        *sorted((source_dir / "share" / "cmake").glob("*.cmake")),
    ]
)
declared = set(re.findall(r"option\(\s*([A-Za-z_0-9]+)", cmake_text))
declared |= set(re.findall(r"set\(\s*([A-Za-z_0-9]+)\s+[^)]*\bCACHE\b", cmake_text))
builtin = re.compile(
    r"^(CMAKE_[A-Z_]+|MPI_(C|CXX)_COMPILER|MPIEXEC_EXECUTABLE|Kokkos_ROOT|Python3_EXECUTABLE)$"
)

# MPI variants that Spack 0.23's and Spack 1.x's builtin recipes both have (mvapich2 lost `cuda`).
MPI_VARIANTS = {"openmpi": {"cuda"}, "mpich": {"cuda", "rocm"}}

PYTHON = "/python/bin/python3"
KOKKOS_CXX = "/kokkos/bin/nvcc_wrapper"


# --- the stand-ins --------------------------------------------------------------------------------
class Spec:
    """Only what the recipes use: variants, satisfies('+x' / 'x=v'), spec['dep'] attributes."""

    def __init__(self, variants, api, kokkos_prefix=None, absent=()):
        self.variants = variants
        self.api = api
        self.kokkos_prefix = kokkos_prefix
        self.absent = set(absent)  # dependencies the concretized spec lacks

    def dependencies(self, name=None, deptype=None):
        return [] if name in self.absent else [types.SimpleNamespace(name=name)]

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
        if name in self.absent:
            raise KeyError(f"No spec with name {name}")
        dep = types.SimpleNamespace(
            mpicxx="/mpi/bin/mpicxx",
            mpicc="/mpi/bin/mpicc",
            hipcc="/rocm/bin/hipcc",
            command=types.SimpleNamespace(path=PYTHON),
            external=self.kokkos_prefix is not None and name == "kokkos",
            prefix=self.kokkos_prefix or f"/{name}",
        )
        if self.api == 1:
            # Spack 0.x: Kokkos' setup_dependent_package sets spec.kokkos_cxx. In Spack 1.x it is a
            # property of the package (self["kokkos"].kokkos_cxx), so the spec has no such attribute.
            dep.kokkos_cxx = KOKKOS_CXX
        return dep


def make_spack_modules(api, directives):
    def recorder(kind):
        def record(*args, **kwargs):
            directives[kind].append((args, kwargs))

        return record

    class CMakePackage:
        def __init__(self, spec, run_tests=False):
            self.spec = spec
            self.run_tests = run_tests

        @staticmethod
        def define(name, value):
            if isinstance(value, bool):
                value = "ON" if value else "OFF"
            return f"-D{name}={value}"

        def define_from_variant(self, name, variant):
            if variant not in self.spec.variants:
                raise KeyError(f"define_from_variant({name!r}, {variant!r}): no such variant")
            return self.define(name, self.spec.variants[variant])

        if api == 2:

            def __getitem__(self, name):  # the dependency's package (Spack 1.x)
                return types.SimpleNamespace(kokkos_cxx=KOKKOS_CXX)

    class CudaPackage:
        cuda_arch_values = ("70", "80", "90")

    class ROCmPackage:
        amdgpu_targets = ("gfx90a", "gfx942")

    package = types.ModuleType("spack.package")
    names = dict(maintainers=lambda *a: None, license=lambda *a, **k: None)
    names.update({k: recorder(k) for k in directives})
    if api == 1:
        names.update(CMakePackage=CMakePackage, CudaPackage=CudaPackage, ROCmPackage=ROCmPackage)
    modules = {"spack": types.ModuleType("spack"), "spack.package": package}
    if api == 2:
        for mod, cls in (("cmake", CMakePackage), ("cuda", CudaPackage), ("rocm", ROCmPackage)):
            module = types.ModuleType(f"spack_repo.builtin.build_systems.{mod}")
            setattr(module, cls.__name__, cls)
            modules[module.__name__] = module
        for parent in ("spack_repo", "spack_repo.builtin", "spack_repo.builtin.build_systems"):
            modules[parent] = types.ModuleType(parent)
    for name, value in names.items():
        setattr(package, name, value)
    return modules, CudaPackage, ROCmPackage


def load(recipe_path, api):
    """Runs the recipe against the stand-ins: (Baton class, directives, CudaPackage, ROCmPackage)."""
    directives = {"variant": [], "depends_on": [], "conflicts": [], "requires": [], "version": []}
    modules, cuda, rocm = make_spack_modules(api, directives)
    saved = {k: sys.modules.get(k) for k in modules}
    sys.modules.update(modules)
    try:
        namespace = {}
        exec(compile(recipe_path.read_text(), str(recipe_path), "exec"), namespace)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return namespace["Baton"], directives, cuda, rocm


def as_dict(args, where):
    out = {}
    for arg in args:
        match = re.fullmatch(r"-D([A-Za-z_0-9]+)(?::[A-Z]+)?=(.*)", arg)
        if not match:
            fail(f"{where}: cmake_args() gave {arg!r}, not -DNAME=VALUE")
            continue
        out[match.group(1)] = match.group(2)
    return out


def check(recipe_path):
    """Checks one recipe; returns what the comparison of both recipes needs."""
    api = 2 if "spack_repo" in recipe_path.parts else 1
    where = f"{recipe_path.relative_to(source_dir)} (API v{api})"
    text = recipe_path.read_text()

    # --- 1. parse, 99 columns ---------------------------------------------------------------------
    tree = ast.parse(text, filename=str(recipe_path))
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > 99:
            fail(f"{where}:{number}: {len(line)} columns (Spack's limit is 99)")

    # --- 4. v2 forms ----------------------------------------------------------------------------------
    imports = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    if api == 2:
        for mod, cls in (
            ("cmake", "CMakePackage"),
            ("cuda", "CudaPackage"),
            ("rocm", "ROCmPackage"),
        ):
            if (f"spack_repo.builtin.build_systems.{mod}", cls) not in imports:
                fail(f"{where}: {cls} is not imported from spack_repo.builtin.build_systems.{mod}")
        if re.search(r"spec\[\"kokkos\"\]\.kokkos_cxx", text):
            fail(f'{where}: kokkos_cxx is a package property in Spack 1.x: use self["kokkos"]')
        repo_yaml = recipe_path.parents[2] / "repo.yaml"
        yaml_text = repo_yaml.read_text() if repo_yaml.is_file() else ""
        if not re.search(r"^\s+namespace:\s*['\"]?baton['\"]?\s*$", yaml_text, re.M):
            fail(f"{where}: {repo_yaml.relative_to(source_dir)} does not declare namespace baton")
        if not re.search(r"^\s+api:\s*['\"]?v2\.\d+['\"]?\s*$", yaml_text, re.M):
            fail(f"{where}: {repo_yaml.relative_to(source_dir)} does not declare api: v2.x")
        if recipe_path.parents[2].name != "baton" or recipe_path.parents[3].name != "spack_repo":
            fail(f"{where}: a v2 repository lives in spack_repo/<namespace>/")
    elif any(m and m.startswith("spack_repo") for m, _ in imports):
        fail(f"{where}: a v1 recipe cannot import spack_repo")

    # --- 2. cmake_args() against the stand-in -----------------------------------------------------
    Baton, directives, CudaPackage, ROCmPackage = load(recipe_path, api)
    if not re.match(r"https?://", str(getattr(Baton, "homepage", "") or "")):
        fail(f"{where}: no homepage (spack audit needs one)")

    variants = {args[0]: kwargs for args, kwargs in directives["variant"]}
    for needed in ("apps", "shared", "gpu_aware_mpi"):
        if needed not in variants:
            fail(f"{where}: variant {needed!r} is missing")

    def cmake_args(run_tests=False, kokkos_prefix=None, absent=None, **overrides):
        values = {name: kw.get("default") for name, kw in variants.items()}
        values.update(cuda=False, rocm=False, cuda_arch="none", amdgpu_target="none")
        values.update(overrides)
        if absent is None:  # test dependencies are in the spec only when concretized with tests
            absent = () if run_tests else ("doctest", "python", "pkgconfig")
        spec = Spec(values, api, kokkos_prefix, absent)
        try:
            return as_dict(Baton(spec, run_tests).cmake_args(), where)
        except Exception as error:  # the recipe uses something the Spack of its API lacks
            fail(f"{where}: cmake_args({overrides}, run_tests={run_tests}) raised {error!r}")
            return {}

    default = cmake_args()
    for name in default:
        if name not in declared and not builtin.match(name):
            fail(f"{where}: the recipe sets {name}, which Baton's CMake does not declare")

    # Every variant reaches CMake with its value: flip it and the argument must follow.
    flips = {
        "apps": [(True, "ON"), (False, "OFF")],
        "shared": [(True, "ON"), (False, "OFF")],
        "gpu_aware_mpi": [(v, v) for v in variants.get("gpu_aware_mpi", {}).get("values", ())],
    }
    forwarded = {
        "apps": "BATON_ENABLE_APPS",
        "shared": "BUILD_SHARED_LIBS",
        "gpu_aware_mpi": "BATON_GPU_AWARE_MPI",
    }
    for variant, cases in flips.items():
        for value, expected in cases:
            got = cmake_args(**{variant: value}).get(forwarded[variant])
            if got != expected:
                fail(
                    f"{where}: {variant}={value}: expected -D{forwarded[variant]}={expected}, got {got}"
                )

    # The CMake option accepts exactly the variant's values.
    strings = re.search(r"BATON_GPU_AWARE_MPI\s+PROPERTY\s+STRINGS\s+([A-Z ]+)\)", cmake_text)
    if not strings or set(strings.group(1).split()) != set(variants["gpu_aware_mpi"]["values"]):
        fail(f"{where}: gpu_aware_mpi values differ from BATON_GPU_AWARE_MPI's STRINGS")

    cuda_args = cmake_args(cuda=True, cuda_arch="80")
    if cuda_args.get("CMAKE_CXX_COMPILER") != KOKKOS_CXX:
        fail(
            f"{where}: +cuda does not select Kokkos' compiler ({cuda_args.get('CMAKE_CXX_COMPILER')})"
        )
    if cuda_args.get("CMAKE_CXX_FLAGS") != "-arch=sm_80":
        fail(f"{where}: +cuda cuda_arch=80 does not pass -arch=sm_80 (nvcc_wrapper's default is sm_70)")
    if cmake_args(rocm=True, amdgpu_target="gfx90a").get("CMAKE_CXX_COMPILER") != "/rocm/bin/hipcc":
        fail(f"{where}: +rocm does not compile with hipcc")
    if default.get("BATON_ENABLE_TESTS") != "OFF":
        fail(f"{where}: BATON_ENABLE_TESTS is not OFF without --test")
    tested = cmake_args(run_tests=True)
    if tested.get("BATON_ENABLE_TESTS") != "ON":
        fail(f"{where}: BATON_ENABLE_TESTS is not ON with --test")
    if tested.get("Python3_EXECUTABLE") != PYTHON:
        fail(f"{where}: with --test, Python3_EXECUTABLE is not the python dependency's interpreter")
    if "Python3_EXECUTABLE" in default:
        fail(f"{where}: Python3_EXECUTABLE without --test (python is a test dependency only)")
    # `spack dev-build --test=root` runs tests on a spec concretized without test dependencies.
    bare = cmake_args(run_tests=True, absent=("doctest", "python", "pkgconfig"))
    if bare.get("BATON_ENABLE_TESTS") != "ON" or "Python3_EXECUTABLE" in bare:
        fail(f"{where}: with --test but no python dependency: {bare}")

    # An external Kokkos (no kokkos-nvcc-wrapper dependency): the compiler its CMake config records.
    with tempfile.TemporaryDirectory() as prefix:
        config = pathlib.Path(prefix, "lib", "x86_64-linux-gnu", "cmake", "Kokkos")
        config.mkdir(parents=True)
        wrapper = pathlib.Path(prefix, "bin", "nvcc_wrapper")
        wrapper.parent.mkdir()
        wrapper.write_text("#!/bin/sh\n")
        fallback = cmake_args(kokkos_prefix=prefix, cuda=True, cuda_arch="90")
        if fallback.get("CMAKE_CXX_COMPILER") != KOKKOS_CXX:
            fail(f"{where}: an external Kokkos without a recorded compiler: not kokkos_cxx")
        (config / "KokkosConfigCommon.cmake").write_text(
            f'set(Kokkos_CXX_COMPILER "{wrapper}")\nset(Kokkos_CXX_COMPILER_ID "NVIDIA")\n'
        )
        recorded = cmake_args(kokkos_prefix=prefix, cuda=True, cuda_arch="90")
        if recorded.get("CMAKE_CXX_COMPILER") != str(wrapper):
            fail(f"{where}: +cuda with an external Kokkos does not use its Kokkos_CXX_COMPILER")

    # --- 3. directives ----------------------------------------------------------------------------
    deps = [
        (args[0], kwargs.get("when", ""), kwargs.get("type"))
        for args, kwargs in directives["depends_on"]
    ]
    dep_pairs = [(spec, when) for spec, when, _ in deps]
    for arch in CudaPackage.cuda_arch_values:
        if (f"kokkos cuda_arch={arch}", f"+cuda cuda_arch={arch}") not in dep_pairs:
            fail(f"{where}: cuda_arch={arch} is not forwarded to kokkos")
    for target in ROCmPackage.amdgpu_targets:
        if (f"kokkos amdgpu_target={target}", f"+rocm amdgpu_target={target}") not in dep_pairs:
            fail(f"{where}: amdgpu_target={target} is not forwarded to kokkos")
    if not any(spec.startswith("kokkos@3.4:") for spec, _ in dep_pairs):
        fail(f"{where}: kokkos@3.4: is not required")
    if not any(
        re.match(r"boost@1\.66:.*\+program_options", s) and w == "+apps" for s, w in dep_pairs
    ):
        fail(f"{where}: +apps does not depend on boost@1.66:+program_options")
    for test_dep in ("doctest", "python", "pkgconfig"):
        if not any(re.match(rf"{test_dep}\b", s) and t == "test" for s, _, t in deps):
            fail(f"{where}: {test_dep} is not a test dependency")
    if api == 2:
        for lang in ("c", "cxx"):
            if (lang, "", "build") not in deps:
                fail(f'{where}: depends_on("{lang}", type="build") is missing')

    conflicts = [(args[0], kwargs.get("when", "")) for args, kwargs in directives["conflicts"]]
    if ("+cuda", "cuda_arch=none") not in conflicts:
        fail(f"{where}: +cuda with cuda_arch=none is not a conflict")
    if ("+rocm", "amdgpu_target=none") not in conflicts:
        fail(f"{where}: +rocm with amdgpu_target=none is not a conflict")
    gpu_mpi = {}
    for spec, when in conflicts:
        for name, sign, variant in re.findall(r"\^([a-z0-9-]+)\s*([~+])([a-z_]+)", spec):
            if variant not in MPI_VARIANTS.get(name, set()):
                fail(
                    f"{where}: conflicts({spec!r}) names {name}'s variant {variant!r}, which "
                    "the builtin recipes of Spack 0.23 and 1.x do not both have"
                )
            if "gpu_aware_mpi=" in when and "gpu_aware_mpi=ON" not in when:
                fail(
                    f"{where}: conflicts({spec!r}, when={when!r}): GPU-aware-MPI conflicts belong "
                    "on gpu_aware_mpi=ON only (the solver would switch AUTO to OFF)"
                )
            gpu_mpi[(name, variant)] = when
    for (name, variant), backend in (
        (("openmpi", "cuda"), "+cuda"),
        (("mpich", "cuda"), "+cuda"),
        (("mpich", "rocm"), "+rocm"),
    ):
        if gpu_mpi.get((name, variant)) != f"{backend} gpu_aware_mpi=ON":
            fail(f"{where}: ^{name}~{variant} is not a conflict for {backend} gpu_aware_mpi=ON")

    requires = [(args, kwargs.get("when", "")) for args, kwargs in directives["requires"]]
    requires += [((s,), w) for s, w in dep_pairs]
    if not any(
        any("kokkos" in a and "+cuda_lambda" in a for a in args)
        and "+cuda" in when
        and "kokkos@:4" in when
        for args, when in requires
    ):
        fail(
            f"{where}: +cuda does not require kokkos+cuda_lambda for Kokkos 4 and older (^kokkos@:4)"
        )

    summary = {
        "variants": variants,
        "depends_on": sorted(str(d) for d in deps if d[0] not in ("c", "cxx")),
        "conflicts": sorted(str(c) for c in conflicts),
        "requires": sorted(str(r) for r in directives["requires"]),
        "cmake": [default, cuda_args, tested, cmake_args(rocm=True, amdgpu_target="gfx90a")],
    }
    print(
        f"{where}: parsed, {len(default)} CMake arguments checked, {len(variants)} variants "
        f"forwarded, {len(CudaPackage.cuda_arch_values) + len(ROCmPackage.amdgpu_targets)} GPU "
        f"targets forwarded, {len(conflicts)} conflicts"
    )
    return summary


results = {}
for recipe in recipes:
    if not recipe.is_file():
        fail(f"{recipe} is missing")
        continue
    results[recipe] = check(recipe)

# --- 5. the two recipes agree ---------------------------------------------------------------------
if V1 in results and V2 in results:
    for key in ("variants", "depends_on", "conflicts", "requires", "cmake"):
        if results[V1][key] != results[V2][key]:
            fail(f"the v1 and v2 recipes differ in {key}")

if failures:
    print("spack recipe check FAILED:")
    for f in failures:
        print("  -", f)
    sys.exit(1)
print(f"spack recipe check: {len(results)} recipe(s) passed")
