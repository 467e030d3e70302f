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

}  // namespace baton::pipeline
