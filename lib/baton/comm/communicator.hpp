#pragma once
/// \file
/// baton::Communicator: an MPI communicator that Baton owns (duplicated, freed) or borrows.

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace baton {

/// How View messages in device memory reach MPI on one communicator (see docs/transport.md).
enum class ViewPath : std::uint8_t {
  /// Host memory as is; device memory as is when MPI is GPU-aware (baton::gpu_aware_mpi()),
  /// otherwise staged through host memory.
  automatic,
  /// Device pointers go to MPI (needs GPU-aware MPI); host memory as is.
  direct,
  /// Every View is copied through a separate host buffer, host memory included (this is how the
  /// staging path is tested without a GPU).
  staged,
};

/// The process-wide default of Communicator::collective_checks(), and what decided it.
struct CollectiveChecksDefault {
  bool on = false;
  /// "BATON_CHECK_COLLECTIVES=0", "BATON_CHECK_COLLECTIVES (set, not 0)", "a Debug build of Baton
  /// (NDEBUG not defined)" or "a Release build of Baton (NDEBUG defined)".
  const char* decided_by = "";
};

/// The decision itself (pure, for tests): `env_value` is BATON_CHECK_COLLECTIVES (nullptr when
/// unset). "0" turns the checks off and any other non-empty value (e.g. "1") turns them on; unset
/// or empty, they are on exactly when `debug_build`.
CollectiveChecksDefault decide_collective_checks(const char* env_value, bool debug_build) noexcept;

/// True when Baton's library was compiled without NDEBUG. Decided where the library is compiled,
/// so the flags of a program that includes Baton's headers do not change it.
bool library_debug_build() noexcept;

/// This process's decision: decide_collective_checks(getenv("BATON_CHECK_COLLECTIVES"),
/// library_debug_build()), read once, on first use (thread-safe).
CollectiveChecksDefault collective_checks_default() noexcept;

/// A communicator handle with clear ownership.
///
/// - `Communicator::duplicate(comm)` makes Baton's own copy (MPI_Comm_dup) and frees it on
///   destruction. Owned communicators get MPI_ERRORS_RETURN, so failures come back as return codes
///   and are thrown as baton::Error.
/// - `Communicator::borrow(comm)` wraps a caller's handle without freeing it or changing its error
///   handler (errors on it follow the caller's handler, by default MPI_ERRORS_ARE_FATAL).
///
/// Move-only. rank() and size() are read once, at construction.
class Communicator {
 public:
  /// Passed to split() as the colour of ranks that want no communicator (MPI_UNDEFINED).
  static constexpr int undefined = MPI_UNDEFINED;

  /// A null communicator (no handle): rank() is -1, size() is 0.
  Communicator() noexcept = default;
  ~Communicator();
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// An owned duplicate of `comm` (collective over `comm`).
  static Communicator duplicate(MPI_Comm comm);
  /// Takes ownership of a handle the caller created (it will be freed); sets MPI_ERRORS_RETURN.
  static Communicator adopt(MPI_Comm comm);
  /// A non-owning view of `comm`; the caller keeps it alive and frees it.
  static Communicator borrow(MPI_Comm comm);

  /// The raw handle, for calling MPI directly; MPI_COMM_NULL for a null communicator.
  MPI_Comm raw() const noexcept { return comm_; }
  bool is_null() const noexcept { return comm_ == MPI_COMM_NULL; }
  explicit operator bool() const noexcept { return !is_null(); }
  /// True when this object frees the handle on destruction.
  bool owns_handle() const noexcept { return owned_; }

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// The View path of this communicator (default ViewPath::automatic). Not shared with copies
  /// made by duplicate() or split(): each communicator has its own.
  ViewPath view_path() const noexcept { return view_path_; }
  void set_view_path(ViewPath path) noexcept { view_path_ = path; }

  /// Whether collectives first agree that every rank passed matching shapes (one extra small
  /// collective), so that a mismatch is a baton::Error on every rank instead of undefined
  /// behaviour. Default: collective_checks_default() (on in a Debug build of Baton's library or
  /// with BATON_CHECK_COLLECTIVES=1, off in a Release build or with BATON_CHECK_COLLECTIVES=0).
  /// Per communicator: duplicate() and split() give the new communicator the process default, not
  /// this one's setting. The v-variants (all_gatherv, gatherv) always check: they exchange shapes
  /// anyway. See baton/collectives/collectives.hpp for what unchecked mode means.
  bool collective_checks() const noexcept { return collective_checks_; }
  void set_collective_checks(bool on) noexcept { collective_checks_ = on; }

  /// Baton's private companion of an owned communicator (a second duplicate, made with it): large
  /// View messages carry their data there, matched by a sequence tag, so that no receive on raw()
  /// can see it. MPI_COMM_NULL for borrowed communicators. For Baton's transport.
  MPI_Comm payload() const noexcept { return payload_; }
  /// The next sequence tag for a message to `dest` on payload() (per destination, wraps at
  /// tag_ub()).
  int next_sequence(int dest) const noexcept;

  /// The largest valid tag (the MPI_TAG_UB attribute); -1 for a null communicator.
  int tag_ub() const noexcept { return tag_ub_; }

  /// An owned duplicate of this communicator (collective).
  Communicator duplicate() const { return duplicate(comm_); }
  /// MPI_Comm_split (collective). Ranks passing `Communicator::undefined` get a null communicator.
  Communicator split(int color, int key) const;
  /// The ranks of this communicator that share a node (MPI_COMM_TYPE_SHARED), ordered by rank.
  Communicator split_node() const;

 private:
  Communicator(MPI_Comm comm, bool owned);
  void release() noexcept;
  void swap(Communicator& other) noexcept;
  void require_handle(const char* operation) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm payload_ = MPI_COMM_NULL;
  std::unique_ptr<std::atomic<std::uint32_t>[]> sequences_;  // one counter per destination
  bool owned_ = false;
  int rank_ = -1;
  int size_ = 0;
  int tag_ub_ = -1;
  ViewPath view_path_ = ViewPath::automatic;
  bool collective_checks_ = default_collective_checks();
  static bool default_collective_checks() noexcept;
};

}  // namespace baton
