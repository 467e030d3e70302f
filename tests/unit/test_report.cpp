// Timing reports: pure arithmetic and file formats, no MPI. Expected values are worked out by hand
// in the comments.
#include <doctest/doctest.h>

#include <algorithm>
#include <baton/core/error.hpp>
#include <baton/timing/report.hpp>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using baton::RankRecord;
using baton::StepRecord;

// A step whose iterations start one after the other from 0.
StepRecord step(const std::string& name, std::vector<double> durations) {
  StepRecord s{name, {}, std::move(durations)};
  double t = 0;
  for (double d : s.durations) {
    s.starts.push_back(t);
    t += d;
  }
  return s;
}

// 3 ranks, step 'a' with durations {1,2}, {2,2}, {3,5}.
std::vector<RankRecord> three_ranks() {
  return {RankRecord{0, {step("a", {1, 2})}}, RankRecord{1, {step("a", {2, 2})}},
          RankRecord{2, {step("a", {3, 5})}}};
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  for (const auto& s : list) {
    if (s == item)
      return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// A small strict JSON parser (RFC 8259), enough to check the files' structure and values.

struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  bool flag = false;
  double value = 0;
  std::string text;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  bool has(const std::string& key) const {
    for (const auto& m : members) {
      if (m.first == key)
        return true;
    }
    return false;
  }
  const Json& operator[](const std::string& key) const {
    for (const auto& m : members) {
      if (m.first == key)
        return m.second;
    }
    throw std::runtime_error("no key '" + key + "'");
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string text) : s_(std::move(text)) {}
  Json parse() {
    Json v = value();
    space();
    if (p_ != s_.size())
      fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(p_));
  }
  void space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t'))
      ++p_;
  }
  char peek() const { return p_ < s_.size() ? s_[p_] : '\0'; }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "'");
    ++p_;
  }
  void literal(const char* word) {
    for (const char* c = word; *c; ++c)
      expect(*c);
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  Json value() {
    space();
    Json v;
    const char c = peek();
    if (c == '{') {
      v.kind = Json::object;
      ++p_;
      space();
      if (peek() == '}') {
        ++p_;
        return v;
      }
      for (;;) {
        space();
        std::string key = string_text();
        space();
        expect(':');
        v.members.emplace_back(std::move(key), value());
        space();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      v.kind = Json::array;
      ++p_;
      space();
      if (peek() == ']') {
        ++p_;
        return v;
      }
      for (;;) {
        v.items.push_back(value());
        space();
        if (peek() == ',') {
          ++p_;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.kind = Json::string;
      v.text = string_text();
      return v;
    }
    if (c == 't' || c == 'f') {
      v.kind = Json::boolean;
      v.flag = c == 't';
      literal(v.flag ? "true" : "false");
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    v.kind = Json::number;
    const std::size_t begin = p_;
    if (peek() == '-')
      ++p_;
    if (peek() == '0') {
      ++p_;
    } else if (digit(peek())) {
      while (digit(peek()))
        ++p_;
    } else {
      fail("bad value");
    }
    if (peek() == '.') {
      ++p_;
      if (!digit(peek()))
        fail("bad fraction");
      while (digit(peek()))
        ++p_;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++p_;
      if (peek() == '+' || peek() == '-')
        ++p_;
      if (!digit(peek()))
        fail("bad exponent");
      while (digit(peek()))
        ++p_;
    }
    v.value = std::stod(s_.substr(begin, p_ - begin));
    return v;
  }

  unsigned hex4() {
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = peek();
      ++p_;
      u <<= 4;
      if (digit(h))
        u |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        u |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        u |= static_cast<unsigned>(h - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return u;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string_text() {
    expect('"');
    std::string out;
    for (;;) {
      if (p_ >= s_.size())
        fail("unterminated string");
      const char c = s_[p_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        fail("raw control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = s_[p_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            expect('\\');
            expect('u');
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF)
              fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default:
          fail("bad escape");
      }
    }
  }

  std::string s_;
  std::size_t p_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Files

class TempDir {
 public:
  TempDir() {
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() /
            ("baton_test_report_" + std::to_string(random()) + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Json read_json(const std::string& path) {
  return JsonParser(read_file(path)).parse();
}

// CSV lines as fields (RFC 4180 quoting; quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool in_quotes = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  REQUIRE_FALSE(in_quotes);
  REQUIRE(field.empty());  // the file ends with a line break
  rows.pop_back();
  return rows;
}

// Parses a whole CSV number field; fails the test on trailing characters.
double csv_number(const std::string& field) {
  std::size_t used = 0;
  const double v = std::stod(field, &used);
  CHECK(used == field.size());
  return v;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Report arithmetic

TEST_CASE("load imbalance of the three-rank example, by hand") {
  // Iteration 0: durations 1, 2, 3 -> mean 2, max 3.  Iteration 1: 2, 2, 5 -> mean 3, max 5.
  // useful = 2 + 3 = 5; waiting = (3-2) + (5-3) = 3; efficiency = 5 / (5+3) = 0.625.
  // Rank totals: 3, 4, 8 -> slowest rank 2 with 8.
  const auto li = baton::load_imbalance(three_ranks());
  REQUIRE(li.steps.size() == 1);
  const auto& a = li.steps[0];
  CHECK(a.step == "a");
  CHECK(a.iterations == 2);
  CHECK(a.ranks == 3);
  CHECK(a.useful == 5.0);
  CHECK(a.waiting == 3.0);
  CHECK(a.efficiency == 0.625);
  CHECK(a.slowest_rank == 2);
  CHECK(a.slowest_total == 8.0);
  // One step: overall is the same numbers.
  CHECK(li.overall.step == "overall");
  CHECK(li.overall.iterations == 2);
  CHECK(li.overall.ranks == 3);
  CHECK(li.overall.useful == 5.0);
  CHECK(li.overall.waiting == 3.0);
  CHECK(li.overall.efficiency == 0.625);
  CHECK(li.overall.slowest_rank == 2);
  CHECK(li.overall.slowest_total == 8.0);
  CHECK(li.warnings.empty());
}

TEST_CASE("time info of the three-rank example, by hand") {
  // Rank 0: total 3, average 1.5; rank 1: total 4, average 2; rank 2: total 8, average 4.
  // Over ranks: mean total 15/3 = 5, max total 8; mean average 7.5/3 = 2.5, max average 4.
  const auto ti = baton::time_info(three_ranks());
  REQUIRE(ti.ranks.size() == 3);
  const double totals[] = {3, 4, 8}, averages[] = {1.5, 2, 4};
  for (int r = 0; r < 3; ++r) {
    CAPTURE(r);
    CHECK(ti.ranks[r].rank == r);
    REQUIRE(ti.ranks[r].steps.size() == 1);
    CHECK(ti.ranks[r].steps[0].step == "a");
    CHECK(ti.ranks[r].steps[0].iterations == 2);
    CHECK(ti.ranks[r].steps[0].total == totals[r]);
    CHECK(ti.ranks[r].steps[0].average == averages[r]);
  }
  REQUIRE(ti.steps.size() == 1);
  CHECK(ti.steps[0].step == "a");
  CHECK(ti.steps[0].ranks == 3);
  CHECK(ti.steps[0].min_iterations == 2);
  CHECK(ti.steps[0].max_iterations == 2);
  CHECK(ti.steps[0].mean_total == 5.0);
  CHECK(ti.steps[0].max_total == 8.0);
  CHECK(ti.steps[0].mean_average == 2.5);
  CHECK(ti.steps[0].max_average == 4.0);
  CHECK(ti.warnings.empty());
}

TEST_CASE("two steps, overall sums, ranks given out of order, first-appearance step order") {
  // Ranks arrive as 2, 0, 1; rank 2 lists 'b' first, but rank 0 (scanned first) has 'a' first.
  // Step 'b' durations {1}, {1}, {4}: mean 2, max 4 -> useful 2, waiting 2, efficiency 0.5,
  // slowest rank 2 with 4.
  // Overall: useful 5 + 2 = 7, waiting 3 + 2 = 5, efficiency 7/12, iterations 2 + 1 = 3,
  // slowest rank 2 with 8 + 4 = 12.
  std::vector<RankRecord> records = {RankRecord{2, {step("b", {4}), step("a", {3, 5})}},
                                     RankRecord{0, {step("a", {1, 2}), step("b", {1})}},
                                     RankRecord{1, {step("a", {2, 2}), step("b", {1})}}};
  const auto li = baton::load_imbalance(records);
  REQUIRE(li.steps.size() == 2);
  CHECK(li.steps[0].step == "a");
  CHECK(li.steps[1].step == "b");
  CHECK(li.steps[1].useful == 2.0);
  CHECK(li.steps[1].waiting == 2.0);
  CHECK(li.steps[1].efficiency == 0.5);
  CHECK(li.steps[1].slowest_rank == 2);
  CHECK(li.steps[1].slowest_total == 4.0);
  CHECK(li.overall.useful == 7.0);
  CHECK(li.overall.waiting == 5.0);
  CHECK(li.overall.efficiency == doctest::Approx(7.0 / 12.0).epsilon(1e-15));
  CHECK(li.overall.iterations == 3);
  CHECK(li.overall.ranks == 3);
  CHECK(li.overall.slowest_rank == 2);
  CHECK(li.overall.slowest_total == 12.0);

  const auto ti = baton::time_info(records);
  REQUIRE(ti.ranks.size() == 3);
  CHECK(ti.ranks[0].rank == 0);
  CHECK(ti.ranks[2].rank == 2);
  REQUIRE(ti.ranks[2].steps.size() == 2);
  CHECK(ti.ranks[2].steps[0].step == "a");  // report order, not the rank's own order
  CHECK(ti.ranks[2].steps[1].total == 4.0);
}

TEST_CASE("the slowest rank on a tie is the lowest rank") {
  // Totals 2, 3, 3 (ranks 0, 1, 2): ranks 1 and 2 tie -> rank 1.
  std::vector<RankRecord> records = {RankRecord{2, {step("s", {3})}},
                                     RankRecord{1, {step("s", {3})}},
                                     RankRecord{0, {step("s", {2})}}};
  const auto li = baton::load_imbalance(records);
  CHECK(li.steps.at(0).slowest_rank == 1);
  CHECK(li.steps.at(0).slowest_total == 3.0);
  CHECK(li.overall.slowest_rank == 1);
}

TEST_CASE("steps missing on some ranks: warnings, and each step uses the ranks that have it") {
  // Ranks 0-3 all run 'setup' {1}; only ranks 0 and 1 run 'train': {2, 2} and {2, 6}.
  // train: iteration means 2 and 4, maxes 2 and 6 -> useful 6, waiting 2, efficiency 0.75,
  // slowest rank 1 with 8. Time info over 2 ranks: totals 4 and 8 -> mean 6, max 8.
  std::vector<RankRecord> records = {RankRecord{0, {step("setup", {1}), step("train", {2, 2})}},
                                     RankRecord{1, {step("setup", {1}), step("train", {2, 6})}},
                                     RankRecord{2, {step("setup", {1})}},
                                     RankRecord{3, {step("setup", {1})}}};
  const auto li = baton::load_imbalance(records);
  const auto ti = baton::time_info(records);
  const std::string missing = "step 'train' missing on ranks 2, 3";
  CHECK(contains(li.warnings, missing));
  CHECK(contains(ti.warnings, missing));
  CHECK(li.warnings.size() == 1);
  REQUIRE(li.steps.size() == 2);
  const auto& train = li.steps[1];
  CHECK(train.ranks == 2);
  CHECK(train.iterations == 2);
  CHECK(train.useful == 6.0);
  CHECK(train.waiting == 2.0);
  CHECK(train.efficiency == 0.75);
  CHECK(train.slowest_rank == 1);
  CHECK(train.slowest_total == 8.0);
  // Overall: useful 1 + 6 = 7, waiting 0 + 2 = 2; rank totals 1+4, 1+8, 1, 1 -> rank 1 with 9.
  CHECK(li.overall.useful == 7.0);
  CHECK(li.overall.waiting == 2.0);
  CHECK(li.overall.ranks == 4);
  CHECK(li.overall.slowest_rank == 1);
  CHECK(li.overall.slowest_total == 9.0);
  REQUIRE(ti.steps.size() == 2);
  CHECK(ti.steps[1].ranks == 2);
  CHECK(ti.steps[1].mean_total == 6.0);
  CHECK(ti.steps[1].max_total == 8.0);
  CHECK(ti.ranks[2].steps.size() == 1);

  SUBCASE("rank lists: one rank, and runs of three or more as ranges") {
    std::vector<RankRecord> many;
    for (int r = 0; r < 10; ++r)
      many.push_back(RankRecord{r, {}});
    many[0].steps.push_back(step("x", {1}));
    many[6].steps.push_back(step("x", {1}));
    many[9].steps.push_back(step("x", {1}));
    for (int r = 0; r < 10; ++r) {
      if (r != 3)
        many[r].steps.push_back(step("y", {1}));
    }
    const auto w = baton::load_imbalance(many).warnings;
    CHECK(contains(w, "step 'x' missing on ranks 1-5, 7, 8"));
    CHECK(contains(w, "step 'y' missing on rank 3"));
  }
}

TEST_CASE("uneven iteration counts: warnings, and load imbalance uses the common iterations") {
  // 'sample' on 4 ranks: {1,1,100}, {1,1}, {1,1,100,100}, {3,3} -> counts 2 to 4, compare 0-1.
  // Each iteration: mean (1+1+1+3)/4 = 1.5, max 3 -> useful 3, waiting 3, efficiency 0.5;
  // totals over iterations 0-1: 2, 2, 2, 6 -> slowest rank 3 with 6 (not the ranks with 100s).
  std::vector<RankRecord> records = {
      RankRecord{0, {step("sample", {1, 1, 100})}}, RankRecord{1, {step("sample", {1, 1})}},
      RankRecord{2, {step("sample", {1, 1, 100, 100})}}, RankRecord{3, {step("sample", {3, 3})}}};
  const auto li = baton::load_imbalance(records);
  REQUIRE(li.steps.size() == 1);
  CHECK(li.steps[0].iterations == 2);
  CHECK(li.steps[0].useful == 3.0);
  CHECK(li.steps[0].waiting == 3.0);
  CHECK(li.steps[0].efficiency == 0.5);
  CHECK(li.steps[0].slowest_rank == 3);
  CHECK(li.steps[0].slowest_total == 6.0);
  CHECK(li.warnings == std::vector<std::string>{
                           "step 'sample': ranks recorded 2 to 4 iterations; load imbalance uses "
                           "iterations 0-1 present on every rank that has the step"});
  // Time info uses each rank's own iterations: rank 2 total 202, average 50.5.
  const auto ti = baton::time_info(records);
  CHECK(ti.ranks[2].steps.at(0).iterations == 4);
  CHECK(ti.ranks[2].steps.at(0).total == 202.0);
  CHECK(ti.ranks[2].steps.at(0).average == 50.5);
  CHECK(ti.steps.at(0).min_iterations == 2);
  CHECK(ti.steps.at(0).max_iterations == 4);
  CHECK(ti.steps.at(0).max_total == 202.0);
  REQUIRE(ti.warnings.size() == 1);
  CHECK(ti.warnings[0].find("step 'sample': ranks recorded 2 to 4 iterations") == 0);

  SUBCASE("one common iteration is named as such") {
    records[1].steps[0] = step("sample", {1});
    const auto w = baton::load_imbalance(records).warnings;
    CHECK(w.at(0).find("load imbalance uses iteration 0 present") != std::string::npos);
  }
}

TEST_CASE("empty records: empty reports with a warning, no crash") {
  const std::vector<RankRecord> none;
  const auto ti = baton::time_info(none);
  const auto li = baton::load_imbalance(none);
  CHECK(ti.ranks.empty());
  CHECK(ti.steps.empty());
  CHECK(ti.warnings == std::vector<std::string>{"no timing records"});
  CHECK(li.steps.empty());
  CHECK(li.overall.iterations == 0);
  CHECK(li.overall.ranks == 0);
  CHECK(li.overall.efficiency == 1.0);
  CHECK(li.overall.slowest_rank == -1);
  CHECK(li.warnings == std::vector<std::string>{"no timing records"});
  CHECK(baton::format_load_imbalance(li).find("warning: no timing records\n") != std::string::npos);

  SUBCASE("ranks without steps are listed, without warnings") {
    const std::vector<RankRecord> idle = {RankRecord{0, {}}, RankRecord{1, {}}};
    const auto t = baton::time_info(idle);
    CHECK(t.ranks.size() == 2);
    CHECK(t.steps.empty());
    CHECK(t.warnings.empty());
    CHECK(baton::load_imbalance(idle).overall.ranks == 0);
  }
  SUBCASE("a step recorded with no iterations counts as missing on that rank") {
    const std::vector<RankRecord> records = {RankRecord{0, {step("a", {2})}},
                                             RankRecord{1, {step("a", {})}},
                                             RankRecord{2, {step("a", {4}), step("z", {})}}};
    const auto l = baton::load_imbalance(records);
    REQUIRE(l.steps.size() == 1);  // 'z' has no iterations anywhere: no row
    CHECK(l.steps[0].ranks == 2);
    CHECK(l.steps[0].useful == 3.0);
    CHECK(contains(l.warnings, "step 'a' recorded no iterations on rank 1"));
    CHECK(contains(l.warnings, "step 'z' missing on ranks 0, 1"));
    CHECK(contains(l.warnings, "step 'z' recorded no iterations on rank 2"));
    const auto t = baton::time_info(records);
    CHECK(t.steps.size() == 1);
    CHECK(t.steps[0].mean_average == 3.0);
    CHECK(t.ranks[1].steps.empty());
  }
}

TEST_CASE("all-zero durations: efficiency 1, no division by zero") {
  std::vector<RankRecord> records = {RankRecord{0, {step("idle", {0, 0})}},
                                     RankRecord{1, {step("idle", {0, 0})}}};
  const auto li = baton::load_imbalance(records);
  CHECK(li.steps.at(0).useful == 0.0);
  CHECK(li.steps.at(0).waiting == 0.0);
  CHECK(li.steps.at(0).efficiency == 1.0);
  CHECK(li.steps.at(0).slowest_rank == 0);
  CHECK(li.overall.efficiency == 1.0);
  const auto ti = baton::time_info(records);
  CHECK(ti.steps.at(0).mean_average == 0.0);
  CHECK(baton::format_load_imbalance(li).find("nan") == std::string::npos);
}

TEST_CASE("equal durations give exactly no waiting, despite rounding of the mean") {
  // (0.1 + 0.1 + 0.1) / 3 is 0.10000000000000002 in doubles, above the maximum 0.1.
  std::vector<RankRecord> records;
  for (int r = 0; r < 3; ++r)
    records.push_back(RankRecord{r, {step("even", {0.1})}});
  const auto li = baton::load_imbalance(records);
  CHECK(li.steps.at(0).waiting == 0.0);
  CHECK(li.steps.at(0).efficiency == 1.0);
}

TEST_CASE("malformed records throw baton::Error naming the rank and the step") {
  auto records = three_ranks();
  SUBCASE("starts and durations of different lengths") {
    records[1].steps[0].starts.pop_back();
    CHECK_THROWS_WITH_AS(baton::time_info(records),
                         "baton::time_info: rank 1, step 'a': 1 starts but 2 durations",
                         baton::Error);
    CHECK_THROWS_WITH_AS(baton::load_imbalance(records),
                         "baton::load_imbalance: rank 1, step 'a': 1 starts but 2 durations",
                         baton::Error);
    TempDir dir;
    CHECK_THROWS_WITH_AS(baton::write_chrome_trace(dir.file("t.json"), records),
                         "baton::write_chrome_trace: rank 1, step 'a': 1 starts but 2 durations",
                         baton::Error);
  }
  SUBCASE("a negative duration") {
    records[2].steps[0].durations[1] = -1;
    CHECK_THROWS_WITH_AS(baton::load_imbalance(records),
                         "baton::load_imbalance: rank 2, step 'a', iteration 1: negative duration",
                         baton::Error);
  }
  SUBCASE("values that are not finite") {
    records[0].steps[0].durations[0] = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH_AS(
        baton::load_imbalance(records),
        "baton::load_imbalance: rank 0, step 'a', iteration 0: duration is not finite",
        baton::Error);
    records = three_ranks();
    records[0].steps[0].starts[1] = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(baton::time_info(records),
                         "baton::time_info: rank 0, step 'a', iteration 1: start is not finite",
                         baton::Error);
  }
  SUBCASE("a rank twice, a negative rank, a step twice on one rank") {
    records[2].rank = 0;
    CHECK_THROWS_WITH_AS(baton::time_info(records), "baton::time_info: rank 0 appears twice",
                         baton::Error);
    records[2].rank = -1;
    CHECK_THROWS_WITH_AS(baton::time_info(records), "baton::time_info: negative rank -1",
                         baton::Error);
    records = three_ranks();
    records[1].steps.push_back(step("a", {1}));
    CHECK_THROWS_WITH_AS(baton::load_imbalance(records),
                         "baton::load_imbalance: rank 1 recorded step 'a' twice", baton::Error);
  }
}

// -----------------------------------------------------------------------------------------------
// Text tables

TEST_CASE("the load-imbalance table shows milliseconds and efficiencies") {
  auto records = three_ranks();
  records[0].steps.push_back(step("b", {0.0005}));
  // b on rank 0 only: useful 0.5 ms, waiting 0, efficiency 1. Overall: useful 5000.5 ms,
  // waiting 3000 ms, efficiency 5000.5 / 8000.5 = 0.62502... -> "0.625"; rank 2 slowest (8 s).
  const std::string text = baton::format_load_imbalance(baton::load_imbalance(records));
  CHECK(text ==
        "Load imbalance (ms): useful = sum over iterations of the mean over ranks, waiting = sum "
        "of max - mean\n"
        "step     iterations  ranks  useful_ms  waiting_ms  efficiency  slowest_rank  "
        "slowest_total_ms\n"
        "a                 2      3   5000.000    3000.000       0.625             2          "
        "8000.000\n"
        "b                 1      1      0.500       0.000       1.000             0             "
        "0.500\n"
        "overall           3      3   5000.500    3000.000       0.625             2          "
        "8000.000\n"
        "warning: step 'b' missing on ranks 1, 2\n");
}

TEST_CASE("the time table shows each step over ranks and each rank's steps") {
  const std::string text = baton::format_time_info(baton::time_info(three_ranks()));
  CHECK(text ==
        "Time per step over ranks (ms)\n"
        "step  ranks  iterations  mean_avg_ms  max_avg_ms  mean_total_ms  max_total_ms\n"
        "a         3           2     2500.000    4000.000       5000.000      8000.000\n"
        "\n"
        "Time per rank and step (ms)\n"
        "rank  step  iterations    avg_ms  total_ms\n"
        "   0  a              2  1500.000  3000.000\n"
        "   1  a              2  2000.000  4000.000\n"
        "   2  a              2  4000.000  8000.000\n");
  // Uneven counts show as a range; control characters never reach the table.
  std::vector<RankRecord> records = {RankRecord{0, {step("x\ny", {1})}},
                                     RankRecord{1, {step("x\ny", {1, 1})}}};
  const std::string uneven = baton::format_time_info(baton::time_info(records));
  CHECK(uneven.find("x?y       2         1-2") != std::string::npos);
  CHECK(uneven.find("warning: step 'x?y': ranks recorded 1 to 2 iterations") != std::string::npos);
}

// -----------------------------------------------------------------------------------------------
// Files

TEST_CASE("the JSON report parses, holds both reports and escapes names") {
  TempDir dir;
  const std::string odd = "q\"b\\s/t\tn\nc\x01 \xC3\xA9";  // quote, backslash, controls, UTF-8
  auto records = three_ranks();
  records[0].steps.push_back(step(odd, {0.25}));
  records[1].steps.push_back(step(odd, {0.25, 0.5}));
  const auto ti = baton::time_info(records);
  const auto li = baton::load_imbalance(records);
  const std::string path = dir.file("report.json");
  baton::write_json(path, ti, li);
  Json json;
  REQUIRE_NOTHROW(json = read_json(path));
  REQUIRE(json.kind == Json::object);
  CHECK(json.members.size() == 3);
  const Json& t = json["time_info"];
  const Json& l = json["load_imbalance"];
  REQUIRE(t["ranks"].items.size() == 3);
  CHECK(t["ranks"].items[1]["rank"].value == 1);
  CHECK(t["ranks"].items[1]["steps"].items[1]["step"].text == odd);
  CHECK(t["ranks"].items[1]["steps"].items[1]["total_s"].value == 0.75);
  REQUIRE(t["steps"].items.size() == 2);
  CHECK(t["steps"].items[0]["mean_total_s"].value == 5.0);
  CHECK(t["steps"].items[1]["max_iterations"].value == 2);
  for (const char* key : {"step", "ranks", "min_iterations", "max_iterations", "mean_average_s",
                          "max_average_s", "mean_total_s", "max_total_s"})
    CHECK(t["steps"].items[0].has(key));
  REQUIRE(l["steps"].items.size() == 2);
  const Json& a = l["steps"].items[0];
  CHECK(a["step"].text == "a");
  CHECK(a["useful_s"].value == 5.0);
  CHECK(a["waiting_s"].value == 3.0);
  CHECK(a["efficiency"].value == 0.625);
  CHECK(a["slowest_rank"].value == 2);
  CHECK(a["slowest_total_s"].value == 8.0);
  CHECK(l["steps"].items[1]["step"].text == odd);
  CHECK(l["overall"]["step"].text == "overall");
  CHECK(l["overall"]["useful_s"].value == li.overall.useful);
  CHECK(l["overall"]["efficiency"].value == li.overall.efficiency);
  // The 'missing on rank 2' warning is in both reports and written once; the uneven-count
  // warnings differ and are both written.
  const Json& warnings = json["warnings"];
  REQUIRE(warnings.kind == Json::array);
  CHECK(warnings.items.size() == 3);
  CHECK(warnings.items[0].text == "step '" + odd + "' missing on rank 2");

  SUBCASE("invalid UTF-8 becomes U+FFFD; empty reports are valid JSON too") {
    auto bad = three_ranks();
    bad[0].steps[0].name = "a\xFF\xC0\xAF\xC3";  // stray, overlong, truncated
    baton::write_json(path, baton::time_info(bad), baton::load_imbalance(bad));
    const Json j = read_json(path);
    CHECK(j["load_imbalance"]["steps"].items[0]["step"].text ==
          "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    baton::write_json(path, baton::time_info({}), baton::load_imbalance({}));
    const Json e = read_json(path);
    CHECK(e["time_info"]["ranks"].items.empty());
    CHECK(e["load_imbalance"]["steps"].items.empty());
    CHECK(e["load_imbalance"]["overall"]["slowest_rank"].value == -1);
    CHECK(e["warnings"].items.size() == 1);
  }
}

TEST_CASE("the CSV has a header, one row per step and an overall row; numbers round-trip") {
  TempDir dir;
  auto records = three_ranks();
  records[0].steps.push_back(step("x, \"y\"", {0.1}));
  records[1].steps.push_back(step("x, \"y\"", {0.3}));
  // x, "y": mean 0.2, max 0.3 -> waiting about 0.1; efficiency 0.2/0.3 = 2/3, not a short decimal.
  const auto li = baton::load_imbalance(records);
  const std::string path = dir.file("imbalance.csv");
  baton::write_csv(path, li);
  const auto rows = read_csv(path);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::vector<std::string>{"step", "iterations", "ranks", "useful_s", "waiting_s",
                                            "efficiency", "slowest_rank", "slowest_total_s"});
  std::vector<baton::StepImbalance> expected = li.steps;
  expected.push_back(li.overall);
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const auto& row = rows[k + 1];
    const auto& s = expected[k];
    CAPTURE(k);
    REQUIRE(row.size() == 8);
    CHECK(row[0] == s.step);
    CHECK(csv_number(row[1]) == static_cast<double>(s.iterations));
    CHECK(csv_number(row[2]) == s.ranks);
    CHECK(csv_number(row[3]) == s.useful);
    CHECK(csv_number(row[4]) == s.waiting);
    CHECK(csv_number(row[5]) == s.efficiency);
    CHECK(csv_number(row[6]) == s.slowest_rank);
    CHECK(csv_number(row[7]) == s.slowest_total);
  }
  CHECK(rows[1][0] == "a");
  CHECK(rows[1][5] == "0.625");
  CHECK(rows[2][0] == "x, \"y\"");
  CHECK(rows[3][0] == "overall");
}

TEST_CASE("the Chrome trace has one X event per iteration and one named track per rank") {
  TempDir dir;
  auto records = three_ranks();
  records[1].steps.push_back(StepRecord{"io", {4.0, 6.5}, {0.5, 0.25}});
  records.push_back(RankRecord{3, {}});  // a rank without steps still gets its track
  const std::string path = dir.file("trace.json");
  baton::write_chrome_trace(path, records);
  Json json;
  REQUIRE_NOTHROW(json = read_json(path));
  CHECK(json["displayTimeUnit"].text == "ms");
  const Json& events = json["traceEvents"];
  REQUIRE(events.kind == Json::array);
  int complete = 0;
  double total_dur = 0;  // microseconds, over every X event
  double expected_dur = 0;
  for (const auto& r : records)
    for (const auto& step : r.steps)
      for (double d : step.durations)
        expected_dur += d * 1e6;
  std::vector<std::string> tracks;
  bool found_io = false;
  for (const Json& e : events.items) {
    REQUIRE(e.kind == Json::object);
    CHECK(e["pid"].value == 0);
    if (e["ph"].text == "X") {
      ++complete;
      total_dur += e["dur"].value;
      if (e["name"].text == "io" && e["args"]["iteration"].value == 1) {
        found_io = true;
        CHECK(e["tid"].value == 1);
        CHECK(e["ts"].value == 6.5e6);  // seconds -> microseconds
        CHECK(e["dur"].value == 0.25e6);
      }
    } else if (e["ph"].text == "M" && e["name"].text == "thread_name") {
      tracks.push_back(e["args"]["name"].text);
      CHECK(e["args"]["name"].text == "rank " + std::to_string(static_cast<int>(e["tid"].value)));
    }
  }
  CHECK(complete == 2 + 2 + 2 + 2);  // three ranks x 2 iterations of 'a', 2 of 'io'
  CHECK(total_dur ==
        doctest::Approx(expected_dur).epsilon(1e-12));  // every iteration, in microseconds
  CHECK(tracks == std::vector<std::string>{"rank 0", "rank 1", "rank 2", "rank 3"});
  CHECK(found_io);

  SUBCASE("negative starts shift the whole trace to begin at 0") {
    records[0].steps[0].starts[0] = -0.5;
    baton::write_chrome_trace(path, records);
    const Json shifted = read_json(path);
    double earliest = 1e300;
    for (const Json& e : shifted["traceEvents"].items) {
      if (e["ph"].text == "X")
        earliest = std::min(earliest, e["ts"].value);
    }
    CHECK(earliest == 0.0);
  }
  SUBCASE("empty input gives a valid trace with no events but the process name") {
    baton::write_chrome_trace(path, {});
    CHECK(read_json(path)["traceEvents"].items.size() == 1);
  }
}

TEST_CASE("writers throw baton::Error naming the path they cannot write") {
  const std::string path = "/nonexistent-baton-dir/sub/report.json";
  const auto ti = baton::time_info(three_ranks());
  const auto li = baton::load_imbalance(three_ranks());
  const auto names_path = [&path](const std::string& prefix) {
    return doctest::Contains((prefix + "cannot open '" + path + "' to write the ").c_str());
  };
  CHECK_THROWS_WITH_AS(baton::write_json(path, ti, li), names_path("baton::write_json: "),
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::write_csv(path, li), names_path("baton::write_csv: "), baton::Error);
  CHECK_THROWS_WITH_AS(baton::write_chrome_trace(path, three_ranks()),
                       names_path("baton::write_chrome_trace: "), baton::Error);
}
