#pragma once
/// \file
/// Extended XYZ (as ASE, OVITO and QUIP write it) in and out: many frames per file, one
/// HostSystem per frame. The format and its rules are described in docs/xyz.md.

#include <baton/systems/host_system.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::systems {

/// The largest atom count a frame may declare; larger counts are rejected before any allocation.
inline constexpr std::size_t max_xyz_atoms = 100000000;

/// Reads every frame of an (extended) XYZ stream. A frame's `system_id` comment key becomes its id
/// (absent: the frame's index in the file); `energy` and `fmax` are read when present, the
/// `steps_*` keys become stage_steps in the order they appear, and `Lattice` and `pbc` become cell
/// and pbc as ASE reads them (a Lattice without pbc is periodic; neither: a cluster; a periodic
/// axis needs a Lattice, whose volume must be finite and not zero). Throws baton::Error for bad
/// input, with a message "baton::systems::read_xyz: <source_name>:<line>: <what is wrong>" (lines
/// count from 1).
std::vector<HostSystem> read_xyz(std::istream& in, const std::string& source_name = "<stream>");

/// read_xyz() on the file at `path`; its messages read
/// "baton::systems::read_xyz_file: <path>:<line>: <what is wrong>". Throws baton::Error if the
/// file cannot be opened.
std::vector<HostSystem> read_xyz_file(const std::string& path);

/// Reads extended XYZ frame by frame, for inputs too large to hold: memory is one frame. The rules
/// are read_xyz()'s, except that ids are not checked for repeats (that needs every id; read_xyz
/// does it). Errors read "baton::systems::XyzReader: <source>:<line>: <what is wrong>".
class XyzReader {
 public:
  /// Reads from `in`, which must outlive the reader.
  explicit XyzReader(std::istream& in, std::string source_name = "<stream>");
  /// Reads the file at `path`; throws baton::Error if it cannot be opened.
  explicit XyzReader(const std::string& path);
  ~XyzReader();
  XyzReader(XyzReader&&) noexcept;
  XyzReader& operator=(XyzReader&&) noexcept;

  /// The next frame (its id: `system_id`, or its index in the stream), or nullopt at the end.
  std::optional<HostSystem> next();
  /// Frames read so far.
  std::int64_t frames() const noexcept;
  /// Line of the last frame's comment line (from 1), for messages.
  std::size_t line() const noexcept;
  /// Byte offset just after the last frame read (where the next one starts).
  std::int64_t offset() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes one extended-XYZ frame per system, numbers in shortest round-trip form (write then read
/// gives the same bits): `Lattice` first for a system with a cell, `pbc` always (`"F F F"` for a
/// cluster). stage_steps[i] is written as `steps_<stage_names[i]>` (a repeated name
/// gets `_2`, `_3`, ...; a step without a name is `steps_stage<i>`). Throws baton::Error for a
/// system whose arrays do not match its atom count, whose cell has a zero or non-finite volume or
/// that is periodic without a cell, or if the stream fails.
///
/// With `stress_mvv2e` > 0, a system periodic along a, b and c with a known virial (and not
/// failed) also gets
/// `stress` (stress(): 9 numbers, the 3x3 matrix row by row as ASE writes it) and `pressure`
/// (pressure()), both in energy / length^3; `stress_mvv2e` is the run's mass x velocity^2 -> energy
/// factor (dynamics::Units::mvv2e) for the kinetic part. 0: neither is written.
void write_xyz(std::ostream& out, const std::vector<HostSystem>& systems,
               const std::vector<std::string>& stage_names = {}, double stress_mvv2e = 0);

/// write_xyz() into the file at `path`, atomically (a temporary file beside it, fsynced, then
/// renamed: a reader never sees half a file, and a failed write leaves `path` as it was); throws
/// baton::Error naming `path` on failure
/// ("baton::systems::write_xyz_file: <path>: system <id> has ...").
void write_xyz_file(const std::string& path, const std::vector<HostSystem>& systems,
                    const std::vector<std::string>& stage_names = {}, double stress_mvv2e = 0);

/// The comment keys write_xyz() uses for `count` step counts of stages named `stage_names`:
/// `steps_<name>` with characters other than letters, digits and '_' replaced by '_', repeats made
/// unique with `_2`, `_3`, ..., and `steps_stage<i>` for stages without a name.
std::vector<std::string> xyz_step_keys(const std::vector<std::string>& stage_names,
                                       std::size_t count);

}  // namespace baton::systems
