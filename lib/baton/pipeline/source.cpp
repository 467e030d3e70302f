#include "baton/pipeline/source.hpp"

#include <algorithm>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/host_transfer.hpp"

namespace baton::pipeline {

VectorSource::VectorSource(std::vector<systems::HostSystem> systems)
    : systems_(std::move(systems)) {
  for (const systems::HostSystem& s : systems_)
    largest_ = std::max<std::int64_t>(largest_, static_cast<std::int64_t>(s.size()));
}

std::optional<systems::HostSystem> VectorSource::next() {
  if (next_ == systems_.size())
    return std::nullopt;
  return std::move(systems_[next_++]);
}

std::vector<std::string> VectorSource::species() const {
  systems::SpeciesTable table;  // in order of first use
  for (std::size_t i = next_; i < systems_.size(); ++i)
    for (const std::string& label : systems_[i].species)
      table.index(label);
  return table.names();
}

std::string VectorSource::problem() const {
  for (const systems::HostSystem& s : systems_) {
    const std::string wrong = systems::host_system_problem(s);
    if (!wrong.empty())
      return "input system " + std::to_string(s.id) + " " + wrong;
  }
  return {};
}

XyzFileSource::XyzFileSource(const std::string& path, Check check, std::vector<std::int64_t> skip,
                             std::int64_t count, std::int64_t largest,
                             std::vector<std::string> species)
    : path_(path),
      reader_(path),
      check_(std::move(check)),
      skip_(std::move(skip)),
      count_(count),
      largest_(largest),
      species_(std::move(species)) {
  std::sort(skip_.begin(), skip_.end());
}

std::optional<systems::HostSystem> XyzFileSource::next() {
  while (std::optional<systems::HostSystem> s = reader_.next()) {
    if (std::binary_search(skip_.begin(), skip_.end(), s->id)) {
      ++skipped_;
      continue;
    }
    if (check_) {
      const std::string problem = check_(*s);
      if (!problem.empty())
        throw Error("baton::pipeline::XyzFileSource: " + path_ + ":" +
                    std::to_string(reader_.line()) + ": system " + std::to_string(s->id) + " " +
                    problem);
    }
    return s;
  }
  return std::nullopt;
}

}  // namespace baton::pipeline
