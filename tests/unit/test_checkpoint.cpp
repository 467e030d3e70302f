// Checkpoint files of running systems (pipeline/checkpoint.hpp): what is written is read back,
// only for the same run; cut or altered bytes are refused; the most advanced checkpoint of a
// system is the one kept; the files of a prefix are found, and only they.
#include <doctest/doctest.h>
#include <unistd.h>

#include <baton/core/error.hpp>
#include <baton/pipeline/checkpoint.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace pl = baton::pipeline;

namespace {

pl::SystemCheckpoint checkpoint(std::int64_t id, int stage, std::int64_t steps) {
  pl::SystemCheckpoint c;
  c.id = id;
  c.stage = stage;
  c.steps = steps;
  c.atoms = 3;
  c.state = std::string("state of ") + std::to_string(id) + std::string(1, '\0') + "x";
  return c;
}

}  // namespace

TEST_CASE("checkpoints: what is written is read back, for the same run only") {
  std::vector<pl::SystemCheckpoint> all = {checkpoint(4, 1, 250), checkpoint(9, 2, 0)};
  all[1].entering = true;  // finished stage 1, waiting to enter stage 2
  const std::string bytes = pl::encode_checkpoints("seed=1 input=a", all);
  const auto back = pl::decode_checkpoints(bytes, "seed=1 input=a", "test");
  REQUIRE(back.size() == 2);
  CHECK(back[0].id == 4);
  CHECK(back[0].stage == 1);
  CHECK(back[0].steps == 250);
  CHECK(back[0].atoms == 3);
  CHECK(back[0].state == all[0].state);
  CHECK_FALSE(back[0].entering);
  CHECK(back[1].state == all[1].state);
  CHECK(back[1].entering);
  CHECK_THROWS_WITH_AS(pl::decode_checkpoints(bytes, "seed=2 input=a", "the file 'x'"),
                       doctest::Contains("the file 'x' holds the checkpoints of another run"),
                       baton::Error);
}

TEST_CASE("checkpoints: cut or altered bytes are refused") {
  const std::string bytes = pl::encode_checkpoints("run", {checkpoint(1, 0, 5)});
  for (std::size_t cut : {std::size_t{4}, bytes.size() / 2, bytes.size() - 1})
    CHECK_THROWS_AS(pl::decode_checkpoints(bytes.substr(0, cut), "run", "f"), baton::Error);
  std::string altered = bytes;
  altered[bytes.size() - 12] ^= 0x10;  // inside the last checkpoint's state
  CHECK_THROWS_WITH_AS(pl::decode_checkpoints(altered, "run", "f"),
                       doctest::Contains("f is damaged: its checksum does not match"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(pl::decode_checkpoints(bytes + "z", "run", "f"),
                       doctest::Contains("damaged"), baton::Error);
  CHECK_THROWS_WITH_AS(pl::decode_checkpoints("not a checkpoint file at all", "run", "f"),
                       doctest::Contains("not a Baton checkpoint file"), baton::Error);
}

TEST_CASE("checkpoints: the most advanced of a system is kept") {
  pl::Checkpoints c;
  c.add(checkpoint(7, 1, 100));
  c.add(checkpoint(7, 1, 50));   // fewer steps in the same stage: older
  c.add(checkpoint(7, 0, 900));  // an earlier stage: older
  REQUIRE(c.find(7) != nullptr);
  CHECK(c.find(7)->stage == 1);
  CHECK(c.find(7)->steps == 100);
  c.add(checkpoint(7, 2, 1));  // a later stage
  CHECK(c.find(7)->stage == 2);
  c.add(checkpoint(8, 0, 3));
  CHECK(c.size() == 2);
  c.erase({7});
  CHECK(c.find(7) == nullptr);
  CHECK(c.all().size() == 1);
  c.add(checkpoint(9, 3, 1));
  c.erase_before(3);
  CHECK(c.find(8) == nullptr);
  CHECK(c.find(9) != nullptr);
}

TEST_CASE("checkpoints: files are written whole and found by their prefix") {
  char dir[] = "/tmp/baton-checkpoint-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string prefix = std::string(dir) + "/out.xyz.part.ckpt";
  pl::write_checkpoints(prefix + ".0", "run", {checkpoint(1, 0, 5)});
  pl::write_checkpoints(prefix + ".12", "run", {checkpoint(2, 1, 6)});
  pl::write_checkpoints(prefix, "run", {});
  for (const char* other : {".tmp", ".1x", "x", ".old.3", ".tmp.x"})
    std::ofstream(prefix + other) << "not ours";
  const std::vector<std::string> files = pl::checkpoint_files(prefix);
  CHECK(files == std::vector<std::string>{prefix, prefix + ".0", prefix + ".12"});
  for (const char* left : {".tmp.4242", ".3.tmp.77"})  // writes a kill cut short
    std::ofstream(prefix + left) << "cut";
  CHECK(pl::checkpoint_temporaries(prefix) ==
        std::vector<std::string>{prefix + ".3.tmp.77", prefix + ".tmp.4242"});
  CHECK(pl::checkpoint_files(prefix) == files);
  for (const char* left : {".tmp.4242", ".3.tmp.77"})
    std::remove((prefix + left).c_str());
  CHECK(pl::read_checkpoints(prefix + ".12", "run").front().id == 2);
  CHECK(pl::read_checkpoints(prefix, "run").empty());
  CHECK_THROWS_WITH_AS(pl::read_checkpoints(prefix + ".7", "run"),
                       doctest::Contains("cannot open the checkpoint file"), baton::Error);
  for (const std::string& f : files)
    std::remove(f.c_str());
  CHECK(pl::checkpoint_temporaries(prefix).empty());
  for (const char* other : {".tmp", ".1x", "x", ".old.3", ".tmp.x"})
    std::remove((prefix + other).c_str());
  ::rmdir(dir);
}
