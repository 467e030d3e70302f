// Steepest descent, an integrator in user code (docs/dynamics.md).  mpiexec -n 1 steepest_descent
#include <baton/baton.hpp>
#include <cmath>
#include <cstdio>

namespace dyn = baton::dynamics;

namespace sys = baton::systems;
struct SteepestDescent {  // x += h F, h = gamma or less (no atom moves more than max_move)
  double gamma = 0.002, max_move = 0.05, tol = 1e-5;  // copied into kernels: plain values only
  std::string name() const { return "descent"; }
  long step_limit() const { return 20000; }  // then Finished, converged or not
  template <class System>  // checked before each step: a relaxed system takes none
  KOKKOS_FUNCTION bool done(const System& s) const {
    return s.fmax() <= tol;
  }
  template <class System>  // run by every thread of the system's team
  KOKKOS_FUNCTION void step(System& s) const {
    const double h = gamma * s.fmax() > max_move ? max_move / s.fmax() : gamma;
    s.for_each_atom([&](int i) {  // each thread moves some of the atoms
      for (int d = 0; d < 3; ++d)
        s.x(i, d) += h * s.f(i, d);
    });
    s.forces();  // forces, energy and fmax at the new positions
  }
};

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);
  sys::SystemsBatch batch({8, 8 * 13}, 1);
  sys::SpeciesTable species;
  sys::append_systems(batch, dyn::generate_clusters({8, 1, {13}}), species);
  dyn::IntegratorStage descent(dyn::LennardJones{}, SteepestDescent{});
  descent.enter(batch, 0, 8);
  descent.advance(batch, 20000);  // at most step_limit() steps: every system Finished
  int wrong = 0;  // each of the 8 perturbed LJ13 clusters must reach the icosahedron
  for (const auto& s : sys::copy_systems_to_host(batch, {0, 1, 2, 3, 4, 5, 6, 7}, species)) {
    std::printf("system %d: E = %.6f, fmax = %.0e\n", int(s.id), s.energy, s.fmax);
    wrong += !(s.fmax <= 1e-5 && std::abs(s.energy + 44.326801) < 1e-6);
  }
  return wrong > 0;
}
