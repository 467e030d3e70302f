#include "baton/pipeline/hooks.hpp"

#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "baton/core/error.hpp"
#include "baton/systems/xyz.hpp"

namespace baton::pipeline {

XyzSnapshots::XyzSnapshots(std::string prefix, long every)
    : prefix_(std::move(prefix)), every_(every) {
  if (every_ < 1)
    throw Error("baton::pipeline::XyzSnapshots: every must be >= 1, got " + std::to_string(every_));
}

std::string XyzSnapshots::file_name(const std::string& prefix, const std::string& stage_name,
                                    int rank) {
  return prefix + "." + stage_name + ".rank" + std::to_string(rank) + ".xyz";
}

void XyzSnapshots::on_step(const HookContext& where,
                           const std::vector<systems::HostSystem>& running) {
  const std::string path = file_name(prefix_, where.stage_name, where.rank);
  // A running system's virial is that of the last time a stage finished it (the built-in
  // stages compute it at a system's final positions only): not these positions', so not written.
  std::vector<systems::HostSystem> frames = running;
  for (systems::HostSystem& s : frames)
    s.virial.fill(std::numeric_limits<double>::quiet_NaN());
  std::ostringstream text;
  systems::write_xyz(text, frames, where.stage_names);  // steps_<stage> as in results files
  // The step goes into every frame's comment line, after its atom count.
  std::istringstream in(text.str());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out)
    throw Error("baton::pipeline::XyzSnapshots: cannot open '" + path + "' for writing");
  std::string line;
  for (const systems::HostSystem& s : running) {
    std::getline(in, line);
    out << line << '\n';
    std::getline(in, line);
    out << line << " snapshot_step=" << where.step << '\n';
    for (std::size_t a = 0; a < s.size(); ++a) {
      std::getline(in, line);
      out << line << '\n';
    }
    ++frames_;
  }
  out.flush();
  if (!out)
    throw Error("baton::pipeline::XyzSnapshots: writing '" + path + "' failed");
}

void LogHook::on_finished(const HookContext& where,
                          const std::vector<systems::HostSystem>& systems) {
  for (const systems::HostSystem& s : systems) {
    const long steps = static_cast<std::size_t>(where.stage) < s.stage_steps.size()
                           ? static_cast<long>(s.stage_steps[static_cast<std::size_t>(where.stage)])
                           : 0;
    out_ << "[baton::pipeline] rank " << where.rank << " stage '" << where.stage_name
         << "': system " << s.id << " finished after " << steps << " steps, ";
    if (s.failed)
      out_ << "failed (" << (s.failure.empty() ? "no reason given" : s.failure) << ")\n";
    else
      out_ << "energy " << s.energy << ", fmax " << s.fmax << '\n';
  }
}

}  // namespace baton::pipeline
