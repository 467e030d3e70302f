#pragma once
/// \file
/// Links between pipeline ranks and the credit protocol on them (internal to the driver).
///
/// Per link between an upstream and a downstream rank: in every step the upstream sends exactly
/// one hand-off (two View messages on `data_tag`: integers, then doubles, in the wire format;
/// possibly 0 systems) and, unless that hand-off ended the stream, the downstream answers with one
/// credit message (`credit_tag`) granting room for more systems and atoms, and saying how much work
/// the downstream rank has left (read by rank 0's Feeder::balance_by_load). A rank never sends more
/// than the credit it holds, so a batch never overflows. Initial credit is the downstream capacity
/// split evenly over its upstream ranks; both sides compute it. The last hand-off carries the
/// end-of-stream flag; a hand-off with the abort flag, or a negative credit, says that the sender
/// stopped with an error.
///
/// Input links are links too: rank 0 reads the input and is the upstream of every other rank of
/// the first segment (a pair of ranks is never both an input link and a chain link).
///
/// Species labels: the wire holds species indices, named by each rank's systems::SpeciesTable. Rank
/// 0 names every label (setup gives every rank those known then); a label it meets later travels
/// along the links: before a hand-off, a rank whose table has grown since its last hand-off on that
/// link sends its labels (`species_tag`) and flags the hand-off (systems::packed_species); the
/// receiver names them before it takes the hand-off's systems. So every table is a prefix of rank
/// 0's, and a rank names every label of every system it holds.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/pipeline/driver_options.hpp"
#include "baton/systems/codec.hpp"
#include "baton/timing/timers.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/view_message.hpp"

namespace baton::pipeline::detail {

inline constexpr int data_tag = 1;     // upstream -> downstream: hand-offs (ints, then reals)
inline constexpr int credit_tag = 2;   // downstream -> upstream: room granted
inline constexpr int results_tag = 4;  // last stage -> rank 0: finished systems (streamed output)
inline constexpr int species_tag = 5;  // upstream -> downstream: species labels, before a hand-off

using IntView = Kokkos::View<std::int64_t*, systems::SystemsBatch::memory_space>;
using RealView = Kokkos::View<double*, systems::SystemsBatch::memory_space>;
using HostInts = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;
using HostReals = Kokkos::View<double*, Kokkos::HostSpace>;

/// "3 systems, 120 atoms".
std::string counts(std::int64_t systems, std::int64_t atoms);

/// What a step's code needs to talk on links: the communicator, the mode, this rank's timers, the
/// step number and, when debugging, where to log.
struct LinkContext {
  const Communicator& comm;
  CommMode mode;
  TimerRegistry& timers;
  long step;
  std::ostream* log;  ///< null: no log
  bool synchronized;
  void note(const std::string& what) const;
};

/// This rank as the downstream end of a link.
struct UpLink {
  int rank = 0;
  bool open = true;
  std::int64_t share_systems = 0;  ///< room this link may hold at once
  std::int64_t share_atoms = 0;
  std::int64_t outstanding_systems = 0;  ///< granted, not yet received
  std::int64_t outstanding_atoms = 0;
  long received_step = 0;  ///< the last step whose hand-off was received
  long credited_step = 0;  ///< the last step whose credit was sent
  /// Where hand-offs land: two pairs of buffers, each as large as the link's share can make a
  /// hand-off, used in turn (a hand-off is unpacked while the next one is already posted).
  std::vector<IntView> int_buffers;
  std::vector<RealView> real_buffers;
  std::size_t next_buffers = 0;
  std::optional<PostedRecvHandle<IntView>> ints;  ///< the posted receives of the next hand-off
  std::optional<PostedRecvHandle<RealView>> reals;

  UpLink(int from, std::int64_t systems, std::int64_t atoms)
      : rank(from),
        share_systems(systems),
        share_atoms(atoms),
        outstanding_systems(systems),
        outstanding_atoms(atoms) {}
};

/// Loads travel in credits as integers: atoms of work left times this.
inline constexpr double load_scale = 1024.0;

/// This rank as the upstream end of a link.
struct DownLink {
  int rank = 0;
  bool open = true;
  std::int64_t credit_systems = 0;
  std::int64_t credit_atoms = 0;
  bool credit_owed = false;  ///< a credit answers our last hand-off (async modes)
  std::optional<ViewRecvHandle<HostInts>> credit;
  /// A hand-off sent from host memory (rank 0's input), kept until its sends complete (declared
  /// before them: the handles, which wait in their destructors, go first).
  systems::HostPacked host_wire;
  SendHandle ints_send;
  SendHandle reals_send;
  std::size_t species_sent = 0;  ///< species labels the downstream rank was sent
  SendHandle species_send;
  /// The work the downstream rank had left when it sent its last credit, in atoms times
  /// load_scale, and the atoms sent to it since (Feeder::balance_by_load).
  std::int64_t reported_load = 0;
  double unreported_load = 0.0;

  DownLink(int to, std::int64_t systems, std::int64_t atoms)
      : rank(to), credit_systems(systems), credit_atoms(atoms) {}
  /// Room for one more system of `atoms` atoms.
  bool fits(std::int64_t atoms) const { return credit_systems >= 1 && credit_atoms >= atoms; }
  void take(std::int64_t atoms) {
    credit_systems -= 1;
    credit_atoms -= atoms;
  }
};

/// Allocates the link's hand-off buffers (`stages`: stage counters per system on the wire).
void allocate_handoff_buffers(UpLink& u, int stages);
/// Posts the receives of the next hand-off: real receives (MPI_Irecv) into the next pair of
/// buffers, bounded by the link's share (async modes: at once after the previous hand-off, so the
/// transfer overlaps the step's compute; sync: when the step receives).
void post_handoff(const LinkContext& c, UpLink& u);
/// Async modes: whether the next hand-off on `u` is there (its posted receives complete); tests
/// them, which also moves them on.
bool handoff_arrived(UpLink& u);
/// Receives this step's hand-off on `u` (the messages only: its header is read with the step's
/// other bookkeeping, then given to accept_handoff()).
systems::PackedSystems receive_handoff(const LinkContext& c, UpLink& u);
/// Checks the hand-off received on `u`, whose header is `h`: an abort notice or more than the
/// credit throws baton::Error. Updates what is outstanding; the end of stream closes the link; in
/// async modes the next hand-off's receives are posted.
void accept_handoff(const LinkContext& c, UpLink& u, const systems::PackedHeader& h);
/// Grants each open link that received a hand-off this step what it may still hold of its share,
/// within `room` (what the receiving batch can take beyond what is outstanding), and sends the
/// credits: a credit answers a hand-off. Each credit carries `load`: the work this rank has left,
/// for rank 0's input balance (Feeder::balance_by_load; 0 where nothing reads it).
void grant_credit(const LinkContext& c, std::vector<UpLink>& links, systems::BatchCapacity room,
                  std::int64_t load = 0);

/// Async modes: takes the credit that answers our last hand-off, if one is owed (blocking).
void collect_owed_credit(const LinkContext& c, DownLink& d);
/// Whether the credit owed on `d` (if any) is there, so that collect_owed_credit would not block.
bool credit_arrived(DownLink& d);
/// Before a hand-off on `d`: when `species` names labels that `d`'s rank was not sent, sends all of
/// them (non-blocking, on species_tag) and returns systems::packed_species, the flag the hand-off
/// must carry; otherwise returns 0.
std::int64_t send_species(const LinkContext& c, DownLink& d, const systems::SpeciesTable& species);
/// For a hand-off on `u` flagged systems::packed_species: receives the labels its sender sent
/// before it and names them in `species` (throws baton::Error if they disagree with what `species`
/// names).
void receive_species(const LinkContext& c, const UpLink& u, systems::SpeciesTable& species);
/// Sends a hand-off (sync: waits for it; fully_async: waits for the previous one first).
void send_handoff(const LinkContext& c, DownLink& d, const systems::PackedSystems& wire,
                  bool end_of_stream);
/// The same for a hand-off encoded on the host (rank 0's input): its host Views go as they are,
/// and only the receiving rank puts them on its device. `d` keeps `wire` until the send completes.
/// In both async modes it completes in the background (rank 0 feeds a link again only once its
/// credit for this hand-off is back, by when the receiver has it).
void send_handoff(const LinkContext& c, DownLink& d, systems::HostPacked wire, bool end_of_stream);
/// After a hand-off that did not end the stream: sync receives the answering credit now, async
/// modes post its receive.
void expect_credit(const LinkContext& c, DownLink& d);

/// Best effort, on a rank that is failing: tells every open upstream rank (negative credit, after
/// taking the hand-off it may still send) and every open downstream rank (an abort hand-off).
void notify_failure(const LinkContext& c, std::vector<UpLink>& up, std::vector<DownLink*> down,
                    int stages) noexcept;

}  // namespace baton::pipeline::detail
