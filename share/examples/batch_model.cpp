// A batch model written in user code: one call evaluates every system that steps, from the flat
// edge list Baton builds (as a machine-learned potential would). Here it is Lennard-Jones, computed
// on the host, so FIRE takes LJ13 to its global minimum, -44.326801 eps.
//   mpiexec -n 2 batch_model
#include <baton/baton.hpp>
#include <cstdio>
#include <memory>

namespace dyn = baton::dynamics;
namespace sys = baton::systems;
namespace pl = baton::pipeline;

class HostLennardJones : public dyn::BatchModel {
 public:
  double cutoff() const override { return 10; }  // beyond the cluster: the whole LJ energy

  void evaluate(const dyn::ModelInputs& in, const dyn::ModelOutputs& out) override {
    // The inputs live where the batch does (a GPU, maybe): copy what is needed to the host.
    const auto pos = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.pos);
    const auto system = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.batch);
    const auto edges = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.edge_index);
    auto energy = Kokkos::create_mirror_view(out.energy);
    auto forces = Kokkos::create_mirror_view(out.forces);
    auto virial = Kokkos::create_mirror_view(out.virial);
    Kokkos::deep_copy(energy, 0.0);
    Kokkos::deep_copy(forces, 0.0);
    Kokkos::deep_copy(virial, 0.0);
    // Every pair comes twice (i, j) and (j, i): half of each edge. Clusters: no cell shifts.
    for (int e = 0; e < in.edges; ++e) {
      const auto i = edges(0, e), j = edges(1, e);
      double r[3], r2 = 0;  // r_ij = pos_j - pos_i
      for (int d = 0; d < 3; ++d) {
        r[d] = pos(j, d) - pos(i, d);
        r2 += r[d] * r[d];
      }
      const double s6 = 1 / (r2 * r2 * r2);
      const double f_over_r = (48 * s6 * s6 - 24 * s6) / r2;  // -dE/dr / r
      energy(system(i)) += 0.5 * 4 * (s6 * s6 - s6);
      for (int d = 0; d < 3; ++d)
        forces(i, d) -= f_over_r * r[d];
      const int a[6] = {0, 1, 2, 0, 0, 1}, b[6] = {0, 1, 2, 1, 2, 2};
      for (int c = 0; c < 6; ++c)
        virial(system(i), c) += 0.5 * f_over_r * r[a[c]] * r[b[c]];
    }
    Kokkos::deep_copy(out.energy, energy);
    Kokkos::deep_copy(out.forces, forces);
    Kokkos::deep_copy(out.virial, virial);
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

  const dyn::Model model(std::make_shared<HostLennardJones>());
  const pl::Pipeline pipeline = pl::make_stage<dyn::FireStage>(sys::BatchCapacity{4, 64}, model);
  pl::Driver driver(world, pipeline, pl::DriverOptions{});
  driver.setup(input);
  driver.run();
  for (const sys::HostSystem& s : driver.gather_results(0))
    std::printf("system %lld: E = %.6f, fmax = %.1e\n", static_cast<long long>(s.id), s.energy,
                s.fmax);
}
