#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/agreement.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/transport/objects.hpp>
#include <baton/workspace/workspace.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "mpi_doctest.hpp"

using baton::test::error_of;

namespace fs = std::filesystem;

namespace {

// A fresh root directory for one test case, the same path on every rank, removed at the end.
class TestRoot {
 public:
  TestRoot() {
    const baton::Communicator& world = baton::test::world();
    if (world.rank() == 0) {
      std::string pattern = (fs::temp_directory_path() / "baton-test-workspace-XXXXXX").string();
      REQUIRE(::mkdtemp(pattern.data()) != nullptr);
      path_ = pattern;
    }
    baton::broadcast_object(world, path_, 0);
  }
  ~TestRoot() {
    const baton::Communicator& world = baton::test::world();
    baton::barrier(world);
    if (world.rank() == 0) {
      std::error_code ignored;
      fs::permissions(path_, fs::perms::owner_all, ignored);
      fs::remove_all(path_, ignored);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

baton::WorkspaceOptions job(const std::string& id, const std::string& name = "default") {
  baton::WorkspaceOptions options;
  options.job_id = id;
  options.name = name;
  return options;
}

// Rank `who`'s record, version `version`: a config and Views of four types and ranks 0 to 3.
baton::Record sample(int who, int version) {
  Kokkos::View<double**, Kokkos::LayoutLeft> positions("positions", 5, 3);
  Kokkos::View<std::int32_t*> ids("ids", 4 + who);
  Kokkos::View<float> energy("energy");
  Kokkos::View<std::uint8_t***> mask("mask", 2, 3, 2);
  auto hp = Kokkos::create_mirror_view(positions);
  auto hi = Kokkos::create_mirror_view(ids);
  auto hm = Kokkos::create_mirror_view(mask);
  for (int i = 0; i < 5; ++i)
    for (int d = 0; d < 3; ++d)
      hp(i, d) = 100.0 * version + who + 0.1 * i + 0.01 * d;
  for (int i = 0; i < 4 + who; ++i)
    hi(i) = who * 1000 + version * 10 + i;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k)
        hm(i, j, k) = static_cast<std::uint8_t>(who + version + i * 6 + j * 2 + k);
  Kokkos::deep_copy(positions, hp);
  Kokkos::deep_copy(ids, hi);
  Kokkos::deep_copy(mask, hm);
  Kokkos::deep_copy(energy, -1.5f * static_cast<float>(who + version));
  baton::Record record;
  record.config =
      "{\"rank\": " + std::to_string(who) + ", \"version\": " + std::to_string(version) + "}";
  record.views.add("positions", positions);
  record.views.add("ids", ids);
  record.views.add("energy", energy);
  record.views.add("mask", mask);
  return record;
}

// How many things in `record` differ from sample(who, version).
int count_wrong(const baton::Record& record, int who, int version) {
  int wrong = 0;
  wrong += record.config !=
           "{\"rank\": " + std::to_string(who) + ", \"version\": " + std::to_string(version) + "}";
  wrong += record.views.names() != std::vector<std::string>{"positions", "ids", "energy", "mask"};
  if (wrong != 0)
    return wrong;
  auto hp = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(),
      record.views.get<Kokkos::View<double**, Kokkos::LayoutLeft>>("positions"));
  auto hi = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), record.views.get<Kokkos::View<std::int32_t*>>("ids"));
  auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                record.views.get<Kokkos::View<float>>("energy"));
  auto hm = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), record.views.get<Kokkos::View<std::uint8_t***>>("mask"));
  wrong += hp.extent(0) != 5 || hp.extent(1) != 3 || hi.extent(0) != std::size_t(4 + who) ||
           hm.extent(0) != 2 || hm.extent(1) != 3 || hm.extent(2) != 2;
  if (wrong != 0)
    return wrong;
  for (int i = 0; i < 5; ++i)
    for (int d = 0; d < 3; ++d)
      wrong += hp(i, d) != 100.0 * version + who + 0.1 * i + 0.01 * d;
  for (int i = 0; i < 4 + who; ++i)
    wrong += hi(i) != who * 1000 + version * 10 + i;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k)
        wrong += hm(i, j, k) != static_cast<std::uint8_t>(who + version + i * 6 + j * 2 + k);
  wrong += he() != -1.5f * static_cast<float>(who + version);
  return wrong;
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777u;
}

std::set<std::string> files_under(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    out.insert(fs::relative(entry.path(), dir).string());
  return out;
}

// Sets the umask for one scope.
class Umask {
 public:
  explicit Umask(mode_t mask) : old_(::umask(mask)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

}  // namespace

TEST_CASE("every rank reads every rank's record: config and Views of several types and ranks") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  baton::Workspace ws(world, root.path(), job("roundtrip"));
  CHECK(ws.directory() == root.path() + "/baton-roundtrip/default");
  ws.publish(sample(world.rank(), 1));
  for (int r = 0; r < world.size(); ++r) {
    const std::optional<baton::Record> got = ws.read_from(r);
    REQUIRE(got.has_value());
    CHECK(count_wrong(*got, r, 1) == 0);
  }
  std::vector<int> all(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r)
    all[static_cast<std::size_t>(r)] = r;
  CHECK(ws.ranks_present() == all);

  // A second version replaces the first; read_all gives it on its root only.
  ws.publish(sample(world.rank(), 2));
  const int last = world.size() - 1;
  const auto records = ws.read_all(last);
  if (world.rank() == last) {
    REQUIRE(records.size() == static_cast<std::size_t>(world.size()));
    for (int r = 0; r < world.size(); ++r) {
      REQUIRE(records[static_cast<std::size_t>(r)].has_value());
      CHECK(count_wrong(*records[static_cast<std::size_t>(r)], r, 2) == 0);
    }
  } else {
    CHECK(records.empty());
  }
  // The file is exactly encode_record's bytes: no second format.
  if (world.rank() == 0) {
    std::ifstream in(ws.path_of(last), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const baton::ByteBuffer expected = baton::encode_record(sample(last, 2));
    CHECK(bytes == std::string(reinterpret_cast<const char*>(expected.data()), expected.size()));
  }
  ws.remove();
}

TEST_CASE("a missing record is std::nullopt; a rank outside the communicator is an error") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  baton::Workspace ws(world, root.path(), job("missing"));
  // Only even ranks write.
  baton::on_every_rank(world, [&] {
    if (world.rank() % 2 == 0)
      ws.write(sample(world.rank(), 1));
  });
  std::vector<int> even;
  for (int r = 0; r < world.size(); ++r) {
    const auto got = ws.read_from(r);
    CHECK(got.has_value() == (r % 2 == 0));
    if (r % 2 == 0) {
      even.push_back(r);
      REQUIRE(got.has_value());
      CHECK(count_wrong(*got, r, 1) == 0);
    }
  }
  CHECK(ws.ranks_present() == even);
  const auto records = ws.read_all(0);
  if (world.rank() == 0)
    for (int r = 0; r < world.size(); ++r)
      CHECK(records[static_cast<std::size_t>(r)].has_value() == (r % 2 == 0));
  const std::string text = error_of([&] { (void)ws.read_from(world.size()); });
  CHECK(text.find("baton::Workspace::read_from: rank " + std::to_string(world.size()) +
                  " is not a rank") != std::string::npos);
  CHECK(error_of([&] { (void)ws.read_all(-1); }).find("baton::Workspace::read_all: rank -1") !=
        std::string::npos);
}

TEST_CASE("a corrupt or truncated record is an error naming the file; read_all agrees on it") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  baton::Workspace ws(world, root.path(), job("corrupt"));
  ws.publish(sample(world.rank(), 1));
  const int last = world.size() - 1;
  baton::barrier(world);
  if (world.rank() == last) {
    // Cut the record short (a torn write would look like this).
    const auto size = fs::file_size(ws.path_of(last));
    fs::resize_file(ws.path_of(last), size - 7);
  }
  baton::barrier(world);
  const std::string text = error_of([&] { (void)ws.read_from(last); });
  CHECK(text.find("baton::Workspace::read_from: rank " + std::to_string(last) + "'s record '" +
                  ws.path_of(last) + "'") != std::string::npos);
  CHECK(text.find("is not a whole record") != std::string::npos);
  CHECK(text.find("read on rank " + std::to_string(world.rank())) != std::string::npos);
  // The same error on every rank from the collective read, not only on its root.
  CHECK(error_of([&] { (void)ws.read_all(0); }).find("is not a whole record") != std::string::npos);

  baton::barrier(world);
  if (world.rank() == last) {
    std::ofstream out(ws.path_of(last), std::ios::binary | std::ios::trunc);
    out << "not a record at all";
  }
  baton::barrier(world);
  const std::string garbage = error_of([&] { (void)ws.read_from(last); });
  CHECK(garbage.find(ws.path_of(last)) != std::string::npos);
  CHECK(garbage.find("19 bytes") != std::string::npos);
  // The other records are unharmed.
  for (int r = 0; r < last; ++r)
    CHECK(count_wrong(*ws.read_from(r), r, 1) == 0);
}

TEST_CASE("directories are 0700 and records 0600 whatever the umask") {
  const baton::Communicator& world = baton::test::world();
  for (const mode_t mask : {mode_t(0), mode_t(0277), mode_t(022)}) {
    CAPTURE(mask);
    TestRoot root;
    Umask scoped(mask);
    baton::Workspace ws(world, root.path(), job("perms"));
    ws.publish(sample(world.rank(), 1));
    CHECK(mode_of(root.path() + "/baton-perms") == 0700u);
    CHECK(mode_of(ws.directory()) == 0700u);
    for (int r = 0; r < world.size(); ++r)
      CHECK(mode_of(ws.path_of(r)) == 0600u);
    ws.publish(sample(world.rank(), 2));  // a replaced record too
    CHECK(mode_of(ws.path_of(world.rank())) == 0600u);
  }
}

TEST_CASE("bad names and job ids are refused on every rank, naming the character") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  struct Case {
    std::string name;
    std::string job_id;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"../x", "", "the name '../x' has '/' at position 2"},
      {"/", "", "the name '/' has '/' at position 0"},
      {"", "", "the name is empty"},
      {"..", "", "the name '..' names a directory"},
      {".", "", "the name '.' names a directory"},
      {"a b", "", "the name 'a b' has ' ' at position 1"},
      {std::string("x\ny"), "", "the name 'x\\x0ay' has \\x0a at position 1"},
      {std::string(256, 'a'), "", "the name has 256 characters"},
      {"ok", "../../etc", "the job id '../../etc' has '/' at position 2"},
      {"ok", "job*", "the job id 'job*' has '*' at position 3"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.expected);
    std::string text;
    try {
      baton::Workspace ws(world, root.path(), job(c.job_id, c.name));
    } catch (const baton::CollectiveError& e) {
      text = e.what();
    }
    CHECK(text.find("baton::Workspace: " + c.expected) != std::string::npos);
  }
  // Nothing was created for any of them.
  if (world.rank() == 0)
    CHECK(files_under(root.path()).empty());

  // A name that differs between ranks is refused on every rank as well.
  if (world.size() > 1) {
    std::string text;
    try {
      baton::Workspace ws(world, root.path(), job("j", world.rank() == 1 ? "other" : "default"));
    } catch (const baton::CollectiveError& e) {
      text = e.what();
    }
    CHECK(text.find("rank 1 passed name 'other'") != std::string::npos);
  }
  // A root that is not a directory.
  std::string text;
  try {
    baton::Workspace ws(world, root.path() + "/nowhere", job("j"));
  } catch (const baton::CollectiveError& e) {
    text = e.what();
  }
  CHECK(text.find("the root '" + root.path() + "/nowhere' is not a directory") !=
        std::string::npos);
}

TEST_CASE("the job id: option, then BATON_WORKSPACE_JOB_ID, then Slurm job and step, else random") {
  using baton::detail::choose_job_id;
  CHECK(choose_job_id("mine", "env", "42", "3").id == "mine");
  CHECK(choose_job_id("", "env", "42", "3").id == "env");
  CHECK(choose_job_id("", nullptr, "42", "3").id == "42.3");
  CHECK_FALSE(choose_job_id("", "", "42", "0").random_suffix);
  CHECK(choose_job_id("", nullptr, "42", nullptr).id == "42.");
  CHECK(choose_job_id("", nullptr, "42", nullptr).random_suffix);
  CHECK(choose_job_id("", nullptr, nullptr, nullptr).id.empty());
  CHECK(choose_job_id("", nullptr, nullptr, nullptr).random_suffix);

  // Drawn ids: the same on every rank, different for two workspaces (two jobs).
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  ::unsetenv("BATON_WORKSPACE_JOB_ID");
  ::unsetenv("SLURM_JOB_ID");
  ::unsetenv("SLURM_STEP_ID");
  baton::Workspace a(world, root.path());
  baton::Workspace b(world, root.path());
  CHECK(a.job_id().size() == 16);
  CHECK(a.job_id() != b.job_id());
  std::string zeros = a.job_id();
  baton::broadcast_object(world, zeros, 0);
  CHECK(zeros == a.job_id());

  // The environment variable, read on rank 0.
  if (world.rank() == 0)
    ::setenv("BATON_WORKSPACE_JOB_ID", "from-env", 1);
  baton::Workspace c(world, root.path());
  CHECK(c.job_id() == "from-env");
  ::setenv("SLURM_JOB_ID", "777", 1);
  ::setenv("SLURM_STEP_ID", "2", 1);
  ::unsetenv("BATON_WORKSPACE_JOB_ID");
  baton::Workspace d(world, root.path());
  CHECK(d.job_id() == "777.2");
  ::unsetenv("SLURM_STEP_ID");
  baton::Workspace e(world, root.path());
  CHECK(e.job_id().rfind("777.", 0) == 0);
  CHECK(e.job_id().size() == 4 + 16);
  ::unsetenv("SLURM_JOB_ID");
}

TEST_CASE("two jobs in one root share no file, and one's cleanup leaves the other's alone") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  baton::Workspace a(world, root.path(), job("jobA"));
  baton::Workspace b(world, root.path(), job("jobB"));
  CHECK(a.directory() != b.directory());
  a.publish(sample(world.rank(), 1));
  b.publish(sample(world.rank(), 2));
  for (int r = 0; r < world.size(); ++r) {
    CHECK(count_wrong(*a.read_from(r), r, 1) == 0);
    CHECK(count_wrong(*b.read_from(r), r, 2) == 0);
  }
  baton::barrier(world);
  std::set<std::string> b_files;
  if (world.rank() == 0) {
    const auto fa = files_under(a.directory());
    b_files = files_under(root.path() + "/baton-jobB");
    CHECK(fa.size() == static_cast<std::size_t>(world.size()));
    for (const std::string& f : fa)
      CHECK(b_files.count("default/" + f) == 1);  // the same names, in another directory
  }
  a.remove();
  CHECK(a.removed());
  if (world.rank() == 0) {
    CHECK_FALSE(fs::exists(root.path() + "/baton-jobA"));
    CHECK(files_under(root.path() + "/baton-jobB") == b_files);
  }
  for (int r = 0; r < world.size(); ++r)
    CHECK(count_wrong(*b.read_from(r), r, 2) == 0);
  CHECK(error_of([&] { a.write(sample(0, 0)); }).find("was removed") != std::string::npos);
  a.remove();  // again: nothing
}

TEST_CASE("remove() takes exactly this workspace's files and an empty job directory") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  if (world.rank() == 0)
    std::ofstream(root.path() + "/unrelated.txt") << "keep me";
  baton::Workspace one(world, root.path(), job("job", "one"));
  baton::Workspace two(world, root.path(), job("job", "two"));
  baton::Workspace other(world, root.path(), job("other-job", "one"));
  one.publish(sample(world.rank(), 1));
  two.publish(sample(world.rank(), 2));
  other.publish(sample(world.rank(), 3));
  baton::barrier(world);
  if (world.rank() == 0)  // what a writer killed mid-write leaves: a temporary file
    std::ofstream(one.path_of(0) + ".tmp.node.123.0") << "partial";
  one.remove();
  if (world.rank() == 0) {
    CHECK_FALSE(fs::exists(one.directory()));
    CHECK(fs::exists(root.path() + "/baton-job"));  // "two" is still in it
    CHECK(files_under(two.directory()).size() == static_cast<std::size_t>(world.size()));
  }
  two.remove();
  if (world.rank() == 0) {
    CHECK_FALSE(fs::exists(root.path() + "/baton-job"));
    CHECK(files_under(other.directory()).size() == static_cast<std::size_t>(world.size()));
    CHECK(fs::exists(root.path() + "/unrelated.txt"));
  }
  for (int r = 0; r < world.size(); ++r)
    CHECK(count_wrong(*other.read_from(r), r, 3) == 0);
}

TEST_CASE("files outlive the Workspace by default; remove_own takes them with it") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  std::string kept, gone;
  {
    baton::Workspace ws(world, root.path(), job("kept"));
    ws.publish(sample(world.rank(), 1));
    kept = ws.directory();
  }
  {
    auto options = job("gone");
    options.on_destruction = baton::WorkspaceOptions::OnDestruction::remove_own;
    baton::Workspace ws(world, root.path(), options);
    ws.publish(sample(world.rank(), 1));
    gone = ws.directory();
    baton::barrier(world);  // every rank has read what it wanted before any leaves
  }
  baton::barrier(world);
  if (world.rank() == 0) {
    CHECK(files_under(kept).size() == static_cast<std::size_t>(world.size()));
    CHECK_FALSE(fs::exists(root.path() + "/baton-gone"));
  }
  // The kept records can be opened again (a later job step, given the job id).
  baton::Workspace again(world, root.path(), job("kept"));
  for (int r = 0; r < world.size(); ++r)
    CHECK(count_wrong(*again.read_from(r), r, 1) == 0);
}

TEST_CASE("an existing directory that is not private, not ours, or a link is refused") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  const auto refused = [&](const std::string& id) {
    std::string text;
    try {
      baton::Workspace ws(world, root.path(), job(id));
    } catch (const baton::CollectiveError& e) {
      text = e.what();
    }
    return text;
  };
  if (world.rank() == 0) {
    fs::create_directory(root.path() + "/baton-loose");
    fs::permissions(root.path() + "/baton-loose", fs::perms(0755));
    fs::create_directory(root.path() + "/elsewhere");
    fs::permissions(root.path() + "/elsewhere", fs::perms(0700));
    fs::create_directory_symlink(root.path() + "/elsewhere", root.path() + "/baton-link");
    fs::create_directory(root.path() + "/baton-inner");
    fs::create_directory(root.path() + "/baton-inner/default");
    fs::permissions(root.path() + "/baton-inner", fs::perms(0700));
    fs::permissions(root.path() + "/baton-inner/default", fs::perms(0770));
  }
  baton::barrier(world);
  CHECK(refused("loose").find("'" + root.path() + "/baton-loose' has permissions 0755: refused") !=
        std::string::npos);
  CHECK(refused("link").find("'" + root.path() + "/baton-link' is a symbolic link: refused") !=
        std::string::npos);
  CHECK(refused("inner").find("/baton-inner/default' has permissions 0770: refused") !=
        std::string::npos);
  // Another user's directory: only root can make one to test with.
  if (::geteuid() == 0) {
    if (world.rank() == 0) {
      fs::create_directory(root.path() + "/baton-theirs");
      fs::permissions(root.path() + "/baton-theirs", fs::perms(0700));
      REQUIRE(::chown((root.path() + "/baton-theirs").c_str(), 65534, 65534) == 0);
    }
    baton::barrier(world);
    CHECK(refused("theirs").find("belongs to uid 65534, not to this user") != std::string::npos);
  }
  if (world.rank() == 0)
    CHECK(files_under(root.path() + "/elsewhere").empty());  // nothing written through the link
}

TEST_CASE("a write failing on one rank is the same error on every rank, and the record stays") {
  const baton::Communicator& world = baton::test::world();
  TestRoot root;
  baton::Workspace ws(world, root.path(), job("fail"));
  ws.publish(sample(world.rank(), 1));
  const int last = world.size() - 1;
  baton::barrier(world);
  // The last rank's record cannot be replaced: a directory stands where the rename would go.
  if (world.rank() == last) {
    fs::remove(ws.path_of(last));
    fs::create_directory(ws.path_of(last));
    std::ofstream(ws.path_of(last) + "/x") << "x";
  }
  baton::barrier(world);
  std::string text;
  try {
    ws.publish(sample(world.rank(), 2));
  } catch (const baton::CollectiveError& e) {
    text = e.what();
  }
  CHECK(text.find("baton::Workspace::write: rank " + std::to_string(last) +
                  " could not write its record '" + ws.path_of(last) + "'") != std::string::npos);
  // The ranks that succeeded have their new records; no temporary file is left behind.
  for (int r = 0; r < last; ++r)
    CHECK(count_wrong(*ws.read_from(r), r, 2) == 0);
  baton::barrier(world);
  if (world.rank() == 0) {
    for (const std::string& f : files_under(ws.directory()))
      CHECK(f.find(".tmp.") == std::string::npos);
  }
  baton::barrier(world);
  if (world.rank() == last)
    fs::remove_all(ws.path_of(last));
}
