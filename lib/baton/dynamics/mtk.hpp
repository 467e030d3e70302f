#pragma once
/// \file
/// NPT: the Martyna-Tobias-Klein barostat with Nose-Hoover chains (Martyna, Tobias and Klein,
/// J. Chem. Phys. 101, 4177, 1994; the splitting of Shinoda, Shiga and Mikami, Phys. Rev. B 69,
/// 134103, 2004; Tuckerman et al., J. Phys. A 39, 5629, 2006), the equations and the step of
/// LAMMPS' fix npt with its defaults (chains of three for the atoms and for the barostat, one
/// loop each, the MTK terms, no drag): isotropic (iso), each axis on its own (aniso) or the whole
/// cell, tilts included (tri). Deterministic, with a conserved quantity.

#include <cstdint>
#include <string>
#include <utility>

#include "baton/dynamics/detail/cell_axes.hpp"
#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/thermostat.hpp"
#include "baton/dynamics/verlet.hpp"

namespace baton::dynamics {

/// MTK NPT parameters (ThermostatOptions: dt, steps, temperature, tau (LAMMPS' Tdamp), draw, seed,
/// units, neighbours; and the barostat's).
struct MtkOptions : ThermostatOptions {
  /// Which strains the barostat moves (LAMMPS' fix npt keywords).
  enum class Coupling {
    iso,    ///< the volume only: the cell keeps its shape
    aniso,  ///< the three lengths (the cell vectors a, b, c each scaled on its own), each toward P0
    tri     ///< aniso and the three tilts (xy, xz, yz), the shear stresses toward 0
  };
  double pressure = 0;                ///< target pressure P0, energy / length^3
  double tau_p = 1;                   ///< the barostat's period (LAMMPS' Pdamp), time
  Coupling coupling = Coupling::iso;  ///< which strains move
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const MtkOptions& p);

/// LAMMPS' fix npt step as an Update of IntegratorStage, per system (N atoms, N_f = 3 N - 3 kinetic
/// degrees of freedom, 3 N_moving with fixed atoms, kT the bath's k_B T):
///
///     the barostat's chain, half a step; the atoms' chain, half a step (velocities scaled);
///     omega_dot, half a step of its force; velocities scaled by the barostat; half a kick;
///     cell and positions strained by half a step of omega_dot; drift; strained again;
///     forces;
///     half a kick; velocities scaled by the barostat; omega_dot, half a step of its force;
///     the atoms' chain, half a step; the barostat's chain, half a step;
///
/// with the barostat's strain rates omega_dot (xx, yy, zz, yz, xz, xy), masses W = (N + 1) kT
/// tau_p^2, the force on omega_dot_i (2 K / (3 N) the MTK term, P the pressure tensor with its
/// kinetic part)
///
///     [(P_ii - P0) V + 2 K / (3 N)] / W,   and P_ij V / W for a tilt (tri),
///
/// the velocities scaled by exp(-dt/4 (omega_dot_i + tr omega_dot / (3 N))) on either side of the
/// tilts' shear, and the cell's rows a, b, c scaled by exp(dt/2 omega_dot_i) each (iso: the whole
/// cell; the positions with it, in fractional coordinates). Thermostat masses: Q_1 = N_f kT tau^2
/// and kT tau^2 (the atoms' chain), kT tau_p^2 (the barostat's, which drives sum W omega_dot_i^2
/// toward kT per strain it moves: iso one, aniso three, tri six). State: the chains' velocities,
/// omega_dot and two work sums for the conserved quantity (state[0..13]).
///
/// aniso and tri act along the cell's own axes (Axes: e1 along a, e2 in the ab plane, e3 normal
/// to it), in which the cell has LAMMPS' form (rows (ax 0 0), (bx by 0), (cx cy cz)): for a cell
/// already in that form, the Cartesian axes, as LAMMPS'; for another, the same dynamics in the
/// cell's own frame, with the system left in its own. The cell is never flipped (LAMMPS' flip): a
/// cell sheared until its width is under twice the cutoff fails with Failure::cell. A system not
/// periodic along all three axes runs at constant volume (the atoms' chain alone: LAMMPS' fix nvt
/// with a chain of three).
struct MtkUpdate {
  VerletUpdate verlet;  ///< the Verlet step (and the velocities drawn on entry)
  double kt;            ///< k_B T, energy
  double tau2;          ///< tau^2 (the atoms' chain)
  double tau_p2;        ///< tau_p^2 (the barostat and its chain)
  double pressure;      ///< P0, energy / length^3
  int coupling;         ///< MtkOptions::Coupling as int

  /// Where state[] keeps what: the atoms' chain velocities (3), the barostat chain's (3), omega_dot
  /// (6: xx yy zz yz xz xy, LAMMPS' order), and the chains' work terms of the conserved quantity
  /// (N_f kT eta_1 + kT (eta_2 + eta_3); kT (eta'_1 + eta'_2 + eta'_3)).
  static constexpr int eta_dot = 0, etap_dot = 3, omega_dot = 6, eta_work = 12, etap_work = 13;

  explicit MtkUpdate(const MtkOptions& p = {});

  std::string name() const { return "npt"; }
  long step_limit() const { return verlet.steps; }
  double cost_estimate() const { return static_cast<double>(verlet.steps); }
  void enter(systems::SystemsBatch& batch, int first, int n) const {
    verlet.enter(batch, first, n);
  }
  /// The barostat reads the virial of every force call.
  KOKKOS_INLINE_FUNCTION bool virial_each_step() const { return true; }
  bool changes_cells() const { return true; }

  /// The conserved quantity: E_pot + E_kin + the chains' energies (sum Q v^2 / 2 + their work
  /// terms) + the barostat's kinetic energy (sum W omega_dot_i^2 / 2) + P0 V. (LAMMPS' fix npt
  /// reports this less E_pot + E_kin, with P0 (V - V_0) for P0 V.)
  template <class System>
  KOKKOS_INLINE_FUNCTION double conserved(const System& s) const {
    const double* st = s.state;
    const double q0 = s.degrees_of_freedom() * kt * tau2, q = kt * tau2, qp = kt * tau_p2;
    double e = s.energy() + verlet.kinetic(s) + st[eta_work] + st[etap_work] +
               0.5 * q0 * st[eta_dot] * st[eta_dot] +
               0.5 * q * (st[eta_dot + 1] * st[eta_dot + 1] + st[eta_dot + 2] * st[eta_dot + 2]);
    if (!barostatted(s))
      return e;
    const double w = (s.atoms() + 1) * kt * tau_p2;
    for (int i = 0; i < (coupling == 2 ? 6 : 3); ++i)
      e += 0.5 * w * st[omega_dot + i] * st[omega_dot + i];
    for (int i = 0; i < 3; ++i)
      e += 0.5 * qp * st[etap_dot + i] * st[etap_dot + i];
    return e + pressure * s.volume();
  }

  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    if (!barostatted(s)) {  // a cluster (or a slab): the atoms' chain alone
      atom_chain(s, kinetic_trace(s));
      verlet.before_forces(s);
      return;
    }
    Axes r;
    cell_axes(s, r);
    barostat_chain(s);
    strain_rates(s, atom_chain(s, kinetic_tensor(s, r)), r);
    const double* od = s.state + omega_dot;
    const double mtk = (od[0] + od[1] + od[2]) / (3.0 * s.atoms());
    s.for_each_atom([&](int i) {
      scale_velocity(s, i, od, mtk, r);
      const double h = 0.5 * verlet.dt * verlet.ftm2v / s.mass(i);
      for (int d = 0; d < 3; ++d)
        s.v(i, d) += h * s.f(i, d);
    });
    if (!strain(s, r))
      return;
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.x(i, d) += verlet.dt * s.v(i, d);
    });
    strain(s, r);
  }

  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    if (!barostatted(s)) {
      verlet.after_forces(s);
      atom_chain(s, kinetic_trace(s));
      return;
    }
    Axes r;
    cell_axes(s, r);
    const double* od = s.state + omega_dot;
    const double mtk = (od[0] + od[1] + od[2]) / (3.0 * s.atoms());
    s.for_each_atom([&](int i) {
      const double h = 0.5 * verlet.dt * verlet.ftm2v / s.mass(i);
      for (int d = 0; d < 3; ++d)
        s.v(i, d) += h * s.f(i, d);
      scale_velocity(s, i, od, mtk, r);
    });
    const Kinetic k = kinetic_tensor(s, r);
    strain_rates(s, k, r);
    atom_chain(s, k);
    barostat_chain(s);
  }

 private:
  /// Twice the kinetic energy tensor, energy, in the cell's axes (Axes): xx yy zz xy xz yz (iso:
  /// only the trace, in xx).
  struct Kinetic {
    double t[6] = {0, 0, 0, 0, 0, 0};
    KOKKOS_INLINE_FUNCTION double trace(int coupling) const {
      return coupling == 0 ? t[0] : t[0] + t[1] + t[2];
    }
    KOKKOS_INLINE_FUNCTION void scale(double f2) {
      for (double& x : t)
        x *= f2;
    }
  };

  /// The cell's own axes (detail::CellAxes): aniso and tri act along them.
  using Axes = detail::CellAxes;

  template <class System>
  KOKKOS_INLINE_FUNCTION bool barostatted(const System& s) const {
    const systems::CellImage& c = s.cell();
    return c.periodic[0] && c.periodic[1] && c.periodic[2];
  }

  /// The axes of the system's cell (Axes; iso: the identity, unused).
  template <class System>
  KOKKOS_INLINE_FUNCTION void cell_axes(const System& s, Axes& axes) const {
    if (coupling != 0)
      detail::cell_axes(s.cell().h, axes);
  }

  /// Only the kinetic tensor's trace, in t[0] (what the atoms' chain alone needs; iso's whole
  /// Kinetic).
  template <class System>
  KOKKOS_INLINE_FUNCTION Kinetic kinetic_trace(const System& s) const {
    s.barrier();  // every velocity written before they are summed
    Kinetic k;
    k.t[0] = verlet.mvv2e * s.sum([&](int i) {
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
    return k;
  }
  /// The kinetic tensor, in the axes `r` for aniso and tri (iso: its trace).
  template <class System>
  KOKKOS_INLINE_FUNCTION Kinetic kinetic_tensor(const System& s, const Axes& r) const {
    if (coupling == 0)
      return kinetic_trace(s);
    s.barrier();  // every velocity written before they are summed
    Kinetic k;
    const double m = verlet.mvv2e;
    const int pairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    for (int c = 0; c < 6; ++c) {
      const int a = pairs[c][0], b = pairs[c][1];
      k.t[c] = m * s.sum([&](int i) { return s.mass(i) * s.v(i, a) * s.v(i, b); });
    }
    r.rotate(k.t);
    return k;
  }

  /// Half a step of a chain of three thermostats (velocities v[0..2], masses q0 and q, q, q) on
  /// something whose twice-kinetic energy is `ke2` and its target `target`: LAMMPS'
  /// nhc_temp_integrate and nhc_press_integrate with one loop. Adds the chain's work term to
  /// `work`; returns the factor that scales the velocities it acts on.
  KOKKOS_INLINE_FUNCTION double chain_half(double* v, double q0, double q, double ke2,
                                           double target, double& work) const {
    const double dt = verlet.dt, dt4 = 0.25 * dt, dt8 = 0.125 * dt;
    v[2] += dt4 * (q * v[1] * v[1] - kt) / q;
    double e = detail::math_exp(-dt8 * v[2]);
    v[1] *= e;
    v[1] += dt4 * (q0 * v[0] * v[0] - kt) / q;
    v[1] *= e;
    e = detail::math_exp(-dt8 * v[1]);
    v[0] *= e;
    v[0] += dt4 * (ke2 - target) / q0;
    v[0] *= e;
    const double factor = detail::math_exp(-0.5 * dt * v[0]);
    ke2 *= factor * factor;
    work += 0.5 * dt * (target * v[0] + kt * (v[1] + v[2]));
    v[0] *= e;
    v[0] += dt4 * (ke2 - target) / q0;
    v[0] *= e;
    e = detail::math_exp(-dt8 * v[2]);
    v[1] *= e;
    v[1] += dt4 * (q0 * v[0] * v[0] - kt) / q;
    v[1] *= e;
    v[2] += dt4 * (q * v[1] * v[1] - kt) / q;
    return factor;
  }

  /// The atoms' chain, half a step, from their kinetic tensor `k`: the velocities scaled. Returns
  /// the kinetic tensor after it.
  template <class System>
  KOKKOS_INLINE_FUNCTION Kinetic atom_chain(System& s, Kinetic k) const {
    const int nf = s.degrees_of_freedom();
    if (nf < 1)
      return k;
    const double f = chain_half(s.state + eta_dot, nf * kt * tau2, kt * tau2, k.trace(coupling),
                                nf * kt, s.state[eta_work]);
    k.scale(f * f);
    s.barrier();  // every thread read the velocities
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.v(i, d) *= f;
    });
    return k;
  }

  /// The barostat's chain, half a step: omega_dot scaled.
  template <class System>
  KOKKOS_INLINE_FUNCTION void barostat_chain(System& s) const {
    const int n = coupling == 2 ? 6 : 3;
    const double w = (s.atoms() + 1) * kt * tau_p2, qp = kt * tau_p2;
    double* od = s.state + omega_dot;
    double ke2 = 0;
    for (int i = 0; i < n; ++i)
      ke2 += w * od[i] * od[i];
    // Its target: kT per strain the barostat moves (iso: one, the volume).
    const double target = (coupling == 0 ? 1 : n) * kt;
    const double f = chain_half(s.state + etap_dot, qp, qp, ke2, target, s.state[etap_work]);
    for (int i = 0; i < n; ++i)
      od[i] *= f;
  }

  /// omega_dot += dt/2 x its force, from the pressure of the kinetic tensor `k` and the last
  /// forces' virial, both in the axes `r` (LAMMPS' nh_omega_dot).
  template <class System>
  KOKKOS_INLINE_FUNCTION void strain_rates(System& s, const Kinetic& k, const Axes& r) const {
    const double volume = s.volume(), n = s.atoms(), w = (n + 1) * kt * tau_p2;
    const double mtk = k.trace(coupling) / (3 * n);
    double* od = s.state + omega_dot;
    const double half = 0.5 * verlet.dt;
    if (coupling == 0) {
      const double p = (k.t[0] + s.virial(0) + s.virial(1) + s.virial(2)) / (3 * volume);
      for (int i = 0; i < 3; ++i)
        od[i] += half * ((p - pressure) * volume / w + mtk / w);
      return;
    }
    double virial[6];
    for (int c = 0; c < 6; ++c)
      virial[c] = s.virial(c);
    r.rotate(virial);
    for (int i = 0; i < 3; ++i)
      od[i] += half * (((k.t[i] + virial[i]) / volume - pressure) * volume / w + mtk / w);
    if (coupling != 2)
      return;
    // The tilts: yz, xz, xy from the tensors' xy xz yz (virial and k.t order).
    od[3] += half * (k.t[5] + virial[5]) / w;
    od[4] += half * (k.t[4] + virial[4]) / w;
    od[5] += half * (k.t[3] + virial[3]) / w;
  }

  /// The barostat's quarter-step scaling of atom i's velocity, on either side of the tilts' shear
  /// (LAMMPS' nh_v_press), along the axes `r` (iso: the same along any).
  template <class System>
  KOKKOS_INLINE_FUNCTION void scale_velocity(const System& s, int i, const double* od, double mtk,
                                             const Axes& r) const {
    const double q = 0.25 * verlet.dt;
    const double f[3] = {detail::math_exp(-q * (od[0] + mtk)), detail::math_exp(-q * (od[1] + mtk)),
                         detail::math_exp(-q * (od[2] + mtk))};
    if (coupling == 0) {
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) *= f[d];
        s.v(i, d) *= f[d];
      }
      return;
    }
    const double world[3] = {s.v(i, 0), s.v(i, 1), s.v(i, 2)};
    double v[3];
    r.in(world, v);
    for (int d = 0; d < 3; ++d)
      v[d] *= f[d];
    if (coupling == 2) {
      v[0] -= 0.5 * verlet.dt * (v[1] * od[5] + v[2] * od[4]);
      v[1] -= 0.5 * verlet.dt * v[2] * od[3];
    }
    for (int d = 0; d < 3; ++d)
      v[d] *= f[d];
    double back[3];
    r.out(v, back);
    for (int d = 0; d < 3; ++d)
      s.v(i, d) = back[d];
  }

  /// The cell strained by half a step of omega_dot (LAMMPS' remap) in the axes `r`, the positions
  /// with it in fractional coordinates. false (the system failed) when the new cell is not usable.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool strain(System& s, const Axes& r) const {
    const double* od = s.state + omega_dot;
    const double dto = 0.5 * verlet.dt;
    const systems::CellImage old = s.cell();
    double h[9];
    if (coupling == 0) {
      const double e = detail::math_exp(dto * od[0]);
      for (int k = 0; k < 9; ++k)
        h[k] = e * old.h[k];
    } else if (coupling == 1) {
      for (int r = 0; r < 3; ++r) {
        const double e = detail::math_exp(dto * od[r]);
        for (int d = 0; d < 3; ++d)
          h[3 * r + d] = e * old.h[3 * r + d];
      }
    } else {
      // The cell in the axes, LAMMPS' upper-triangular box h (xx yy zz yz xz xy) = the rows
      // (xx 0 0), (xy yy 0), (xz yz zz); the tilts move with the old lengths on both sides of the
      // lengths' scaling; then back to the system's frame.
      double b[3], c[3];
      r.in(old.h + 3, b);
      r.in(old.h + 6, c);
      const double xx = r.r[0] * old.h[0] + r.r[1] * old.h[1] + r.r[2] * old.h[2];
      const double yy = b[1], zz = c[2];
      double yz = c[1], xz = c[0], xy = b[0];
      const double dto2 = dto / 2, dto4 = dto / 4, dto8 = dto / 8;
      for (int side = 0; side < 2; ++side) {
        double e = detail::math_exp(dto8 * od[0]);
        xz = (xz * e + dto4 * (od[5] * yz + od[4] * zz)) * e;
        e = detail::math_exp(dto4 * od[1]);
        yz = (yz * e + dto2 * od[3] * zz) * e;
        e = detail::math_exp(dto4 * od[0]);
        xy = (xy * e + dto2 * od[5] * yy) * e;
        e = detail::math_exp(dto8 * od[0]);
        xz = (xz * e + dto4 * (od[5] * yz + od[4] * zz)) * e;
      }
      const double n[9] = {xx * detail::math_exp(dto * od[0]), 0, 0,  xy,
                           yy * detail::math_exp(dto * od[1]), 0, xz, yz,
                           zz * detail::math_exp(dto * od[2])};
      for (int k = 0; k < 3; ++k)
        r.out(n + 3 * k, h + 3 * k);
    }
    if (!s.set_cell(h)) {
      s.fail(systems::Failure::cell);
      return false;
    }
    s.for_each_atom([&](int i) {
      double f[3];
      for (int k = 0; k < 3; ++k)
        f[k] = s.x(i, 0) * old.inv[k] + s.x(i, 1) * old.inv[3 + k] + s.x(i, 2) * old.inv[6 + k];
      for (int d = 0; d < 3; ++d)
        s.x(i, d) = f[0] * h[d] + f[1] * h[3 + d] + f[2] * h[6 + d];
    });
    return true;
  }
};

/// The "npt" stage with `--barostat mtk`: params.steps MTK steps per system, then Finished. enter()
/// draws velocities (params.draw) and computes forces.
template <class Potential = LennardJones>
class MtkStage : public IntegratorStage<Potential, MtkUpdate> {
 public:
  explicit MtkStage(Potential potential = {}, MtkOptions params = {})
      : IntegratorStage<Potential, MtkUpdate>(std::move(potential), MtkUpdate(params),
                                              params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const MtkOptions& params() const noexcept { return params_; }

 private:
  MtkOptions params_;
};

extern template class IntegratorStage<LennardJones, MtkUpdate>;
extern template class IntegratorStage<Morse, MtkUpdate>;
extern template class IntegratorStage<Eam, MtkUpdate>;
extern template class MtkStage<LennardJones>;
extern template class MtkStage<Morse>;
extern template class MtkStage<Eam>;

}  // namespace baton::dynamics
