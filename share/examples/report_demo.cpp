#include <baton/timing/report.hpp>

#include <iostream>

int main() {
  using baton::RankRecord;
  using baton::StepRecord;
  // Three ranks; per iteration: compute, then exchange. Seconds.
  const std::vector<std::vector<double>> compute = {
      {0.010, 0.011, 0.010}, {0.012, 0.012, 0.013}, {0.015, 0.016, 0.014}};
  const std::vector<std::vector<double>> exchange = {
      {0.004, 0.005, 0.004}, {0.003, 0.002, 0.003}, {0.001, 0.001}};  // rank 2: 2 iterations
  std::vector<RankRecord> records;
  for (int r = 0; r < 3; ++r) {
    StepRecord c{"compute", {}, compute[r]}, e{"exchange", {}, exchange[r]};
    double t = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      c.starts.push_back(t);
      t += compute[r][i];
      if (i < exchange[r].size()) {
        e.starts.push_back(t);
        t += exchange[r][i];
      }
    }
    records.push_back(RankRecord{r, {c, e}});
  }
  records[0].steps.push_back(StepRecord{"checkpoint", {0.05}, {0.020}});  // rank 0 only

  const baton::TimeInfo info = baton::time_info(records);
  const baton::LoadImbalance imbalance = baton::load_imbalance(records);
  std::cout << baton::format_time_info(info) << "\n" << baton::format_load_imbalance(imbalance);
  baton::write_json("report.json", info, imbalance);
  baton::write_csv("imbalance.csv", imbalance);
  baton::write_chrome_trace("trace.json", records);
}
