#pragma once
/// \file
/// What one stage did on one rank.

#include <string>

namespace baton::pipeline {

struct StageCounters {
  int stage = 0;
  std::string name;
  long systems = 0;              ///< systems that finished this stage here
  long steps = 0;                ///< dynamics steps those systems took here
  long atom_steps = 0;           ///< sum over those systems of atoms * steps
  double compute_seconds = 0.0;  ///< time in enter() and advance()
};

/// The copies of systems' payload (atoms, cells, energies: the wire message's contents) that one
/// path of hand-offs made on this rank, counted as systems::host_syncs() is: one per copy where it
/// is made, a kernel or host loop that writes the payload anew, or one deep_copy (the integers and
/// the doubles of a message are two). Only hand-offs of at least one system count. What MPI and
/// Baton's transport copy is not counted here (docs/pipeline.md, "What each hand-off copies").
struct CopyCount {
  long handoffs = 0;   ///< messages (or moves) of at least one system
  long copies = 0;     ///< copies of their payload
  long crossings = 0;  ///< of those, between host memory and the batches' memory space
  /// One hand-off that made `c` copies, `x` of them crossings.
  void add(long c, long x) noexcept {
    handoffs += 1;
    copies += c;
    crossings += x;
  }
};

/// Driver::handoff_copies(): every path a system takes between batches, ranks and the host.
struct HandoffCopies {
  CopyCount input_local;  ///< rank 0: input systems into its own first stage's batch
  CopyCount input_sent;   ///< rank 0: input systems encoded for the other first-stage ranks
  CopyCount received;     ///< hand-offs from upstream ranks into this rank's first batch
  CopyCount local;        ///< systems moved between two stages on this rank
  CopyCount sent;         ///< hand-offs packed for downstream ranks
  CopyCount results;      ///< finished systems out of the last stage, to the host for rank 0
  CopyCount collected;    ///< rank 0: results decoded for the sink (or gather_results)
  CopyCount hooks;        ///< systems shown to hooks (a finished stage's own download or not)
};

}  // namespace baton::pipeline
