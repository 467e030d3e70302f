#include "baton/pipeline/driver_options.hpp"

#include "baton/core/error.hpp"
#include "baton/pipeline/pipeline.hpp"

namespace baton::pipeline {

CommMode parse_comm_mode(const std::string& text) {
  if (text == "sync")
    return CommMode::sync;
  if (text == "async_recv" || text == "async-recv")
    return CommMode::async_recv;
  if (text == "fully_async" || text == "fully-async")
    return CommMode::fully_async;
  throw Error("baton::pipeline::parse_comm_mode: unknown communication mode '" + text +
              "' (choose sync, async_recv or fully_async)");
}

std::string to_string(CommMode mode) {
  switch (mode) {
    case CommMode::sync:
      return "sync";
    case CommMode::async_recv:
      return "async_recv";
    case CommMode::fully_async:
      return "fully_async";
  }
  return "?";
}

std::vector<std::string> Pipeline::names() const {
  std::vector<std::string> out;
  for (const StageSpec& s : stages_)
    out.push_back(s.name);
  return out;
}

}  // namespace baton::pipeline
