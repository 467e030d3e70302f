// The results file of a pipeline run (XyzFileSink, scan_results): the run description in its first
// frame, resuming only this run's results, a damaged frame told from a cut last frame, and write
// errors that name their cause.
#include <doctest/doctest.h>
#include <unistd.h>

#include <baton/core/atomic_file.hpp>
#include <baton/core/error.hpp>
#include <baton/pipeline/sink.hpp>
#include <baton/systems/xyz.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace sys = baton::systems;
namespace pl = baton::pipeline;

namespace {

std::vector<sys::HostSystem> systems(int n, int first_id = 0) {
  std::vector<sys::HostSystem> out;
  for (int i = 0; i < n; ++i) {
    sys::HostSystem s;
    s.id = first_id + i;
    s.species = {"Ar", "Ar"};
    s.positions = {0, 0, 0, 1.1 + 0.01 * i, 0, 0};
    s.energy = -1.0 - i;
    s.fmax = 1e-7;
    s.stage_steps = {10 + i};
    out.push_back(s);
  }
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_all(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const baton::Error& e) {
    return e.what();
  }
  return "";
}

const pl::RunDescription run_a{{"baton", "0.1.0"}, {"seed", "1"}, {"nve-steps", "3000"}};

// A file the way a killed run leaves it: `n` systems written with run_a, no rename.
void unfinished_run(const std::string& path, int n) {
  std::remove((path + ".part").c_str());
  pl::XyzFileSink sink(path, {"fire"}, false, run_a);
  sink.write(systems(n));
}  // not finished: path.part stays

}  // namespace

TEST_CASE("a run description survives encoding, whatever its text") {
  const pl::RunDescription run{{"input", "dir;x=1/\"odd\" name%.xyz"}, {"empty", ""}, {"a", "b c"}};
  CHECK(pl::decode_run(pl::encode_run(run)) == run);
  CHECK(pl::encode_run(run).find('"') == std::string::npos);
  CHECK(pl::run_differences(run, run).empty());
  CHECK_THROWS_AS(pl::decode_run("novalue"), baton::Error);
  CHECK_THROWS_AS(pl::decode_run("a=%4"), baton::Error);
}

TEST_CASE("run_differences names every option that differs, is missing or is new") {
  const pl::RunDescription now{{"baton", "0.1.0"}, {"seed", "2"}, {"fmax", "1e-5"}};
  const std::string d = pl::run_differences(run_a, now);
  CHECK(d.find("seed: 1 there, 2 now") != std::string::npos);
  CHECK(d.find("fmax: not there, 1e-5 now") != std::string::npos);
  CHECK(d.find("nve-steps: 3000 there, not given now") != std::string::npos);
  CHECK(d.find("baton") == std::string::npos);
}

TEST_CASE("the first frame carries the run description, and the file still reads as XYZ") {
  const std::string path = "baton_test_results_describe.xyz";
  {
    pl::XyzFileSink sink(path, {"fire"}, false, run_a);
    sink.write(systems(2));
    sink.write(systems(3, 2));
    sink.finish();
  }
  const pl::ResultsOnDisk found = pl::scan_results(path);
  REQUIRE(found.run.has_value());
  CHECK(*found.run == run_a);
  CHECK(found.ids == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  const std::string text = read_all(path);
  CHECK(text.find("baton_run=") == text.rfind("baton_run="));  // the first frame only
  CHECK(sys::read_xyz_file(path).size() == 5);
  std::remove(path.c_str());
}

TEST_CASE("resume goes on only from this run's FILE.part") {
  const std::string path = "baton_test_results_resume.xyz";
  const std::string part = path + ".part";

  SUBCASE("the same run goes on, a cut last frame dropped") {
    unfinished_run(path, 4);
    const std::string whole = read_all(part);
    write_all(part, whole.substr(0, whole.size() - 20));  // the last frame cut mid-line
    pl::XyzFileSink sink(path, {"fire"}, true, run_a);
    CHECK(sink.resumed_from_part());
    CHECK(sink.done_ids() == std::vector<std::int64_t>{0, 1, 2});
    sink.write(systems(1, 3));
    sink.finish();
    CHECK(pl::scan_results(path).ids == std::vector<std::int64_t>{0, 1, 2, 3});
  }
  SUBCASE("another run's results are refused, naming what differs, and left as they were") {
    unfinished_run(path, 4);
    const std::string before = read_all(part);
    pl::RunDescription other = run_a;
    other[1].second = "2";
    const std::string e = error_of([&] { pl::XyzFileSink(path, {"fire"}, true, other); });
    CHECK(e.find("another run") != std::string::npos);
    CHECK(e.find("seed: 1 there, 2 now") != std::string::npos);
    CHECK(read_all(part) == before);
  }
  SUBCASE("results without a description are refused") {
    std::remove(part.c_str());
    sys::write_xyz_file(part, systems(3));
    const std::string e = error_of([&] { pl::XyzFileSink(path, {"fire"}, true, run_a); });
    CHECK(e.find("no baton_run description") != std::string::npos);
  }
  SUBCASE("a complete FILE is never taken as results to go on from") {
    std::remove(part.c_str());
    sys::write_xyz_file(path, systems(5));
    pl::XyzFileSink sink(path, {"fire"}, true, run_a);
    CHECK_FALSE(sink.resumed_from_part());
    CHECK(sink.done_ids().empty());
  }
  std::remove(part.c_str());
  std::remove(path.c_str());
}

TEST_CASE("a damaged frame before the last is an error naming the file and line") {
  const std::string path = "baton_test_results_damaged.xyz";
  const std::string part = path + ".part";
  unfinished_run(path, 5);
  std::string text = read_all(part);
  // Frame 2 (lines 5-8): its first atom line loses a column; whole frames follow it.
  std::istringstream lines(text);
  std::string out, line;
  for (int n = 1; std::getline(lines, line); ++n)
    out += (n == 7 ? std::string("Ar 0 0") : line) + "\n";
  write_all(part, out);
  const std::string e = error_of([&] { pl::scan_results(part); });
  CHECK(e.find(part + ":5: frame 2 is damaged") != std::string::npos);
  CHECK(error_of([&] { pl::XyzFileSink(path, {"fire"}, true, run_a); }).find(":5:") !=
        std::string::npos);
  CHECK(read_all(part) == out);  // nothing cut away
  std::remove(part.c_str());
}

TEST_CASE("a full disk is named as such") {
  if (::access("/dev/full", W_OK) != 0)
    return;
  std::ofstream full("/dev/full", std::ios::binary);
  std::vector<sys::HostSystem> big = systems(1);
  big[0].species.assign(2000, "Ar");
  big[0].positions.assign(6000, 1.5);
  const std::string e = error_of([&] { sys::write_xyz(full, big); });
  CHECK(e.find("No space left on device") != std::string::npos);

  const std::string path = "baton_test_results_full";
  std::remove((path + ".part").c_str());
  REQUIRE(::symlink("/dev/full", (path + ".part").c_str()) == 0);
  {
    baton::AtomicFile file(path, ".part", true);
    file.keep_partial();
    file.stream() << "a few bytes";
    const std::string flushed = error_of([&] { file.flush(); });
    CHECK(flushed.find("No space left on device") != std::string::npos);
  }
  std::remove((path + ".part").c_str());
}
