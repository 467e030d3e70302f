// A potential written in user code and run by Baton's stages: the Mie (n, m) pair potential,
//   E = C eps ((sigma/r)^n - (sigma/r)^m),  C = n / (n - m) (n / m)^(m / (n - m)).
// Mie(12, 6) is Lennard-Jones, so FIRE takes LJ13 to its global minimum, -44.326801 eps.
//   mpiexec -n 2 user_potential
#include <baton/baton.hpp>
#include <cmath>
#include <cstdio>

namespace dyn = baton::dynamics;
namespace sys = baton::systems;
namespace pl = baton::pipeline;

struct Mie {
  double epsilon = 1, sigma = 1, cutoff = 3;
  int n = 12, m = 6;  // even exponents, n > m
  double c = 0;       // the prefactor C eps, set by kernel()

  // Host side: check the parameters, return what the kernels use (here a copy with c set).
  Mie kernel() const {
    if (!(epsilon > 0 && sigma > 0 && cutoff > 0 && n > m && m > 0 && n % 2 == 0 && m % 2 == 0))
      throw baton::Error("Mie: need epsilon, sigma, cutoff > 0 and even n > m > 0");
    Mie k = *this;
    k.c = epsilon * n / (n - m) * std::pow(double(n) / m, double(m) / (n - m));
    return k;
  }
  // Device side: pairs closer than the cutoff interact...
  KOKKOS_FUNCTION double cutoff_squared() const { return cutoff * cutoff; }
  // ...with this energy and force_over_r = -dE/dr / r (species ignored: one kind of atom).
  KOKKOS_FUNCTION void pair(int, int, double r2, double& energy, double& force_over_r) const {
    const double s2 = sigma * sigma / r2;
    double sn = 1, sm = 1;
    for (int k = 0; k < n / 2; ++k)
      sn *= s2;
    for (int k = 0; k < m / 2; ++k)
      sm *= s2;
    energy = c * (sn - sm);
    force_over_r = c * (n * sn - m * sm) / r2;
  }
};

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);
  const baton::Communicator& world = runtime.world();

  dyn::ClusterSpec spec;  // 6 perturbed LJ13 icosahedra
  spec.count = 6;
  spec.sizes = {13};
  const auto input =
      world.rank() == 0 ? dyn::generate_clusters(spec) : std::vector<sys::HostSystem>{};

  Mie mie;
  mie.cutoff = 10;  // beyond the cluster: the whole LJ energy
  const pl::Pipeline pipeline = pl::make_stage<dyn::FireStage>(sys::BatchCapacity{4, 64}, mie);
  pl::Driver driver(world, pipeline, pl::DriverOptions{});
  driver.setup(input);
  driver.run();
  const auto results = driver.gather_results(0);
  for (const sys::HostSystem& s : results)
    std::printf("system %lld: E = %.6f, fmax = %.1e\n", static_cast<long long>(s.id), s.energy,
                s.fmax);
}
